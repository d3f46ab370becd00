/**
 * The catalog as served: the static rows of catalog-data.ts plus the runtime's own error codes.
 * Built once in `init`; lookups per request are a Map hit.
 */
import { catalogData } from './catalog-data.js';
import type { ApiErrorDescription, CatalogEntry, RuntimeErrorTable } from './types.js';

/**
 * A well-formed error type: Quay's snake_case, the runtime's codes and Kubernetes' CamelCase
 * reasons all fit, while anything that could smuggle path or markup into a URL does not.
 */
export const ERROR_TYPE_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,127}$/;

/** Path of one description under a base URL; the `type` of every ApiError points here. */
export const errorTypePath = (title: string): string => `/api/v1/error/${encodeURIComponent(title)}`;

export class Catalog {
  readonly #entries: ReadonlyMap<string, CatalogEntry>;

  constructor(entries: Iterable<CatalogEntry>) {
    const map = new Map<string, CatalogEntry>();
    for (const entry of entries) {
      if (!ERROR_TYPE_PATTERN.test(entry.title)) {
        throw new Error(`catalog: error type ${JSON.stringify(entry.title)} does not match ${ERROR_TYPE_PATTERN}`);
      }
      if (map.has(entry.title)) throw new Error(`catalog: error type ${entry.title} is defined twice`);
      map.set(entry.title, entry);
    }
    this.#entries = map;
  }

  get(title: string): CatalogEntry | undefined {
    return this.#entries.get(title);
  }

  has(title: string): boolean {
    return this.#entries.has(title);
  }

  entries(): CatalogEntry[] {
    return [...this.#entries.values()];
  }

  /** Quay's `error_view`: the resource's own absolute URL, its name and its help text. */
  describe(entry: CatalogEntry, baseUrl: string): ApiErrorDescription {
    return { type: baseUrl + errorTypePath(entry.title), title: entry.title, description: entry.description };
  }
}

/** A runtime row: its title leads its description, which says how to fix it. */
const runtimeDescription = (e: RuntimeErrorTable[string]): string =>
  e.description.startsWith(e.title) ? e.description : `${e.title.replace(/\.$/, '')}. ${e.description}`;

/**
 * The catalog: the static rows, then the runtime's codes. A code both define (Quay's and the
 * runtime's `invalid_response`) is emitted by both, so its one description covers both meanings.
 */
export const buildCatalog = (runtimeTable: RuntimeErrorTable): Catalog => {
  const rows = new Map(catalogData.map((e) => [e.title, { ...e }]));
  for (const [code, e] of Object.entries(runtimeTable)) {
    const shared = rows.get(code);
    if (shared) shared.description += ` From the function runtime: ${runtimeDescription(e)}`;
    else rows.set(code, { title: code, status: e.status, source: 'runtime', description: runtimeDescription(e) });
  }
  return new Catalog(rows.values());
};
