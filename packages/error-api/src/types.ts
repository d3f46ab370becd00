/**
 * The shapes this service speaks. ApiErrorDescription and ApiError are Red Hat Quay's
 * (endpoints/api/error.py, endpoints/exception.py): Quay's clients parse them, so field names and
 * presence rules stay exactly as Quay emits them.
 */

/** 200 body of `GET /api/v1/error/{error_type}`. */
export interface ApiErrorDescription {
  /** Absolute URL of this resource: `{base_url}/api/v1/error/{title}`. */
  type: string;
  /** The error type's name; uniquely identifies the kind of error. */
  title: string;
  /** What the error means and how to fix it. */
  description: string;
}

/** 200 body of `GET /api/v1/error`. Wrapped in an object, as Quay wraps its lists. */
export interface ApiErrorDescriptionList {
  errors: ApiErrorDescription[];
}

/** RFC 9457 problem details in Quay's dialect, served as `application/problem+json`. */
export interface ApiError {
  status: number;
  /** `{base_url}/api/v1/error/{error_type}`: dereferencing it yields the ApiErrorDescription. */
  type: string;
  title: string;
  detail?: string;
  instance?: string;
  /** Deprecated alias of `detail`, still read by old Quay clients. */
  error_message?: string;
  /** Deprecated alias of `title`, still read by old Quay clients. */
  error_type?: string;
}

/** Who defines an error type; the catalog-completeness test checks each source. */
export const CatalogSources = ['quay', 'service', 'runtime', 'cluster-api'] as const;
export type CatalogSource = (typeof CatalogSources)[number];

/** One row of the catalog. `status` is the HTTP status the type is usually served with. */
export interface CatalogEntry {
  title: string;
  status: number;
  source: CatalogSource;
  description: string;
}

/** The runtime's catalog shape (`runtimeErrors` of @func/runtime): code → entry. */
export type RuntimeErrorTable = Readonly<Record<string, { status: number; title: string; description: string }>>;

/** An HTTP answer in the runtime's structured-return form. */
export interface HttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body?: string;
}
