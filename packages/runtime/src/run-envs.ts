/**
 * func.yaml `run.envs` (Knative's list of {name, value}) as environment defaults: a variable the real
 * environment sets wins, as it would in a container where the platform injects the same list.
 * Only `name`/`value` pairs apply locally; `{{ env:NAME }}` takes NAME from the local environment
 * (as `func` does at deploy time); secret and config-map references exist only on a cluster.
 */

interface EnvEntry {
  name?: unknown;
  value?: unknown;
}

const ENV_REF = /^\{\{\s*env:([-._a-zA-Z][-._a-zA-Z0-9]*)\s*\}\}$/;
const CLUSTER_REF = /^\{\{\s*(?:secret|configMap|configmap):/;

/** name → value from a parsed func.yaml's run.envs; entries that cannot apply locally are left out. */
export function funcYamlEnvs(doc: unknown, localEnv: Record<string, string | undefined> = {}): Map<string, string> {
  const out = new Map<string, string>();
  const list = (doc as { run?: { envs?: unknown } } | undefined)?.run?.envs;
  if (!Array.isArray(list)) return out;
  for (const entry of list as EnvEntry[]) {
    if (typeof entry?.name !== 'string' || entry.name === '' || typeof entry.value !== 'string') continue;
    const ref = ENV_REF.exec(entry.value.trim());
    if (ref) {
      const v = localEnv[ref[1]!];
      if (v !== undefined) out.set(entry.name, v);
    } else if (!CLUSTER_REF.test(entry.value)) out.set(entry.name, entry.value);
  }
  return out;
}

/**
 * Sets each variable the environment leaves unset or empty (empty counts as unset, as it does for
 * every option in config.ts); returns the names it set.
 */
export function applyEnvDefaults(env: Record<string, string | undefined>, defaults: Map<string, string>): string[] {
  const set: string[] = [];
  for (const [name, value] of defaults) {
    if (env[name] !== undefined && env[name] !== '') continue;
    env[name] = value;
    set.push(name);
  }
  return set;
}
