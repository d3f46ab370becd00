import type { Descriptor, Platform } from './types.js';

const ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };

/** The platform of the running machine in OCI's words (Node's `x64` is OCI's `amd64`). */
export function hostPlatform(): Platform {
  return { os: 'linux', architecture: ARCH[process.arch] ?? process.arch };
}

export function formatPlatform(p: Platform): string {
  return `${p.os}/${p.architecture}${p.variant ? `/${p.variant}` : ''}`;
}

/** `linux/amd64` or `linux/arm64/v8` → a Platform; refuses anything else. */
export function parsePlatform(text: string): Platform {
  const [os, architecture, variant, ...rest] = text.split('/');
  if (!os || !architecture || rest.length > 0) throw new Error(`Invalid platform ${JSON.stringify(text)}: expected os/arch[/variant], e.g. linux/amd64`);
  return variant ? { os, architecture, variant } : { os, architecture };
}

/** Picks the manifest for a platform from an index's entries, as container runtimes do. */
export function choosePlatform(manifests: Descriptor[], want: Platform): Descriptor {
  const candidates = manifests.filter((m) => m.platform?.os === want.os && m.platform.architecture === want.architecture);
  const exact = candidates.find((m) => (m.platform?.variant ?? '') === (want.variant ?? ''));
  const chosen = exact ?? (want.variant ? undefined : candidates[0]);
  if (chosen) return chosen;
  const offered = manifests.map((m) => (m.platform ? formatPlatform(m.platform) : 'unknown')).join(', ');
  throw new Error(`The image has no manifest for ${formatPlatform(want)} (it offers: ${offered || 'none'})`);
}
