/**
 * Verified tokens, remembered briefly by their exact string. Verifying a JWT with jose costs several
 * times what the rest of a request does (the bench in bench/error-api measures it), and a client sends
 * the same token on every call. Only outcomes of a successful signature and claims check are kept,
 * never past the token's own `exp`, so a cached answer is one verification would give again.
 */

export interface CachedOutcome<T> {
  value: T;
  /** Epoch ms after which the entry must be verified again. */
  until: number;
}

export class TokenCache<T> {
  readonly #entries = new Map<string, CachedOutcome<T>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0 && this.maxEntries > 0;
  }

  get(token: string): T | undefined {
    const hit = this.#entries.get(token);
    if (!hit) return undefined;
    if (this.now() < hit.until) return hit.value;
    this.#entries.delete(token);
    return undefined;
  }

  /** `expSeconds` is the token's `exp` claim: the entry never outlives the token. */
  set(token: string, value: T, expSeconds: number): void {
    if (!this.enabled) return;
    const until = Math.min(this.now() + this.ttlMs, expSeconds * 1000);
    if (until <= this.now()) return;
    // Map keeps insertion order: dropping the first key evicts the oldest entry.
    if (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(token, { value, until });
  }

  get size(): number {
    return this.#entries.size;
  }
}
