/** Registry failures by what the user can do about them; messages never carry credentials. */
export const RegistryErrorCode = ['unauthorized', 'denied', 'not-found', 'unreachable', 'tls', 'protocol'] as const;
export type RegistryErrorCode = (typeof RegistryErrorCode)[number];

export class RegistryError extends Error {
  override name = 'RegistryError';
  constructor(readonly code: RegistryErrorCode, message: string, readonly status?: number) {
    super(message);
  }
}

interface DistributionErrors {
  errors?: Array<{ code?: string; message?: string }>;
}

/** The distribution API's `{errors: [{code, message}]}` as one line, or the status alone. */
export function describeBody(body: string): string {
  try {
    const parsed = JSON.parse(body) as DistributionErrors;
    const first = parsed.errors?.[0];
    if (first) return `${first.code ?? 'ERROR'}: ${first.message ?? ''}`.trim();
  } catch {
    // not JSON: fall through
  }
  return '';
}

export function errorForStatus(status: number, what: string, body: string): RegistryError {
  const detail = describeBody(body);
  const suffix = detail ? ` (${detail})` : '';
  if (status === 401) return new RegistryError('unauthorized', `Unauthorized: ${what} needs credentials the registry accepts${suffix}`, status);
  if (status === 403) return new RegistryError('denied', `Denied: the registry does not allow ${what}${suffix}`, status);
  if (status === 404) return new RegistryError('not-found', `Not found: ${what}${suffix}`, status);
  return new RegistryError('protocol', `The registry answered ${status} to ${what}${suffix}`, status);
}

const TLS_CODES = new Set(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'EPROTO', 'ERR_SSL_WRONG_VERSION_NUMBER']);

export function connectionError(err: unknown, registry: string): RegistryError {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (TLS_CODES.has(code) || /certificate|SSL|TLS/i.test((err as Error).message)) {
    return new RegistryError('tls', `TLS with ${registry} failed (${code || (err as Error).message}); pass its CA, or use plain HTTP only for a registry you trust`);
  }
  return new RegistryError('unreachable', `Cannot reach the registry ${registry} (${code || (err as Error).message})`);
}
