/**
 * A registry's refusal as one message that says what to do: the registry client's errors name the
 * failure (never a password or token); this adds where credentials come from and the flags that
 * change them.
 */
import { CommandError } from '../command-error.js';

const HINTS: Record<string, string> = {
  unauthorized: 'Credentials come from --username / --password (or FUNC_USERNAME / FUNC_PASSWORD), else from ~/.docker/config.json ($DOCKER_CONFIG) as `docker login` writes it.',
  denied: 'The credentials were accepted but may not do this: check the account\'s rights on that repository.',
  unreachable: 'Is the registry running, and is the name right?',
  tls: 'Pass --registry-insecure only for a registry you trust that speaks plain HTTP.',
  'not-found': 'Check the image name and tag.',
};

export function registryFailure(err: unknown, what: string): Error {
  const e = err as { name?: string; code?: string; message?: string };
  if (e?.name !== 'RegistryError') return err as Error;
  const hint = HINTS[e.code ?? ''] ?? '';
  return new CommandError(`Cannot ${what}: ${e.message}. ${hint}`.trim());
}
