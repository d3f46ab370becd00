/**
 * Field validation: FieldError values mirror Kubernetes' field.Error (type → StatusCause.reason,
 * field path → StatusCause.field). Validators return errors, never throw.
 */

export const FieldErrorTypes = [
  'FieldValueRequired',
  'FieldValueInvalid',
  'FieldValueNotSupported',
  'FieldValueDuplicate',
  'FieldValueForbidden',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
] as const;
export type FieldErrorType = (typeof FieldErrorTypes)[number];

export interface FieldError {
  type: FieldErrorType;
  /** Dotted path with indices: `spec.containers[0].image`. */
  field: string;
  /** Human message as Kubernetes words it: `Required value`, `Invalid value: "x": …`. */
  message: string;
}

/* ---- Constructors: Kubernetes' field.Error wording (k8s.io/apimachinery/pkg/util/validation/field) ---- */

/** Values print as Go's %q / %v would: strings quoted, numbers and booleans bare. */
const show = (value: unknown): string =>
  typeof value === 'string' ? JSON.stringify(value) : typeof value === 'object' ? JSON.stringify(value) : String(value);

export const required = (field: string, detail = ''): FieldError => ({
  type: 'FieldValueRequired',
  field,
  message: detail ? `Required value: ${detail}` : 'Required value',
});

export const invalidValue = (field: string, value: unknown, detail: string): FieldError => ({
  type: 'FieldValueInvalid',
  field,
  message: `Invalid value: ${show(value)}${detail ? `: ${detail}` : ''}`,
});

export const notSupported = (field: string, value: unknown, supported: readonly string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  message: `Unsupported value: ${show(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
});

export const duplicate = (field: string, value: unknown): FieldError => ({
  type: 'FieldValueDuplicate',
  field,
  message: `Duplicate value: ${show(value)}`,
});

export const forbiddenField = (field: string, detail: string): FieldError => ({
  type: 'FieldValueForbidden',
  field,
  message: `Forbidden: ${detail}`,
});

export const tooLong = (field: string, max: number): FieldError => ({
  type: 'FieldValueTooLong',
  field,
  message: `Too long: must have at most ${max} bytes`,
});

/** field.TooMany: a list or map with more entries than allowed. */
export const tooMany = (field: string, actual: number, max: number): FieldError => ({
  type: 'FieldValueTooMany',
  field,
  message: `Too many: ${actual}: must have at most ${max} items`,
});

/** field.TooLongMaxLength: the value itself is not repeated. */
export const tooLongMaxLength = (field: string, max: number): FieldError => ({
  type: 'FieldValueTooLong',
  field,
  message: `Too long: may not be longer than ${max}`,
});

/** field.TypeInvalid: `Invalid value: "string": spec.x in body must be of type integer: "string"`. */
export const typeInvalid = (field: string, value: unknown, detail: string): FieldError => ({
  type: 'FieldValueTypeInvalid',
  field,
  message: `Invalid value: ${show(value)}: ${detail}`,
});

export const FieldImmutable = 'field is immutable';
export const immutable = (field: string, value: unknown): FieldError => invalidValue(field, value, FieldImmutable);

/* ---- Name and label rules (k8s.io/apimachinery/pkg/util/validation), each → messages, [] when valid ---- */

const DNS1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123SubdomainFmt = `${DNS1123LabelFmt}(\\.${DNS1123LabelFmt})*`;
const DNS1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LabelValueFmt = `(${QualifiedNameFmt})?`;
const whole = (fmt: string): RegExp => new RegExp(`^${fmt}$`);
const dns1123Label = whole(DNS1123LabelFmt);
const dns1123Subdomain = whole(DNS1123SubdomainFmt);
const dns1035Label = whole(DNS1035LabelFmt);
const qualifiedNamePart = whole(QualifiedNameFmt);
const labelValue = whole(LabelValueFmt);

const maxLen = (n: number): string => `must be no more than ${n} characters`;
const regexError = (msg: string, fmt: string, ...examples: string[]): string =>
  `${msg} (e.g. ${examples.map((e) => `'${e}'`).join(',  or ')}, regex used for validation is '${fmt}')`;

export const DNS1123LabelMessage = regexError(
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
  DNS1123LabelFmt, 'my-name', '123-abc');
export const DNS1123SubdomainMessage = regexError(
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  DNS1123SubdomainFmt, 'example.com');
export const DNS1035LabelMessage = regexError(
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
  DNS1035LabelFmt, 'my-name', 'abc-123');
const QualifiedNameMessage = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LabelValueMessage = regexError(
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  LabelValueFmt, 'MyValue', 'my_value', '12345');

// Each rule answers a valid value first, without building message arrays: they run several times per write.
export const isDNS1123Label = (v: string): string[] => v.length <= 63 && dns1123Label.test(v) ? [] : [
  ...(v.length > 63 ? [maxLen(63)] : []),
  ...(dns1123Label.test(v) ? [] : [DNS1123LabelMessage]),
];

export const isDNS1123Subdomain = (v: string): string[] => v.length <= 253 && dns1123Subdomain.test(v) ? [] : [
  ...(v.length > 253 ? [maxLen(253)] : []),
  ...(dns1123Subdomain.test(v) ? [] : [DNS1123SubdomainMessage]),
];

export const isDNS1035Label = (v: string): string[] => v.length <= 63 && dns1035Label.test(v) ? [] : [
  ...(v.length > 63 ? [maxLen(63)] : []),
  ...(dns1035Label.test(v) ? [] : [DNS1035LabelMessage]),
];

/** Label and annotation keys: `[prefix/]name`, prefix a DNS subdomain. */
export const isQualifiedName = (v: string): string[] => {
  if (v.length <= 63 && !v.includes('/') && qualifiedNamePart.test(v)) return [];
  const parts = v.split('/');
  if (parts.length > 2) {
    return [regexError(`a qualified name ${QualifiedNameMessage}`, QualifiedNameFmt, 'MyName', 'my.name', '123-abc') +
      " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"];
  }
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  const errs: string[] = [];
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push(`name part ${maxLen(63)}`);
  if (name.length > 0 && !qualifiedNamePart.test(name)) {
    errs.push(regexError(`name part ${QualifiedNameMessage}`, QualifiedNameFmt, 'MyName', 'my.name', '123-abc'));
  }
  return errs;
};

export const isValidLabelValue = (v: string): string[] => v.length <= 63 && labelValue.test(v) ? [] : [
  ...(v.length > 63 ? [maxLen(63)] : []),
  ...(labelValue.test(v) ? [] : [LabelValueMessage]),
];

/** Run a rule and turn each message into an Invalid FieldError at `field`. */
export const check = (field: string, value: string, rule: (v: string) => string[]): FieldError[] =>
  rule(value).map((m) => invalidValue(field, value, m));

export const TotalAnnotationSizeLimitB = 256 * 1024;

export const validateLabels = (labels: Record<string, string> | undefined, field: string): FieldError[] => {
  const errs: FieldError[] = [];
  for (const k in labels) {
    const v = labels[k]!;
    if (isQualifiedName(k).length > 0) errs.push(...check(field, k, isQualifiedName));
    if (isValidLabelValue(v).length > 0) errs.push(...check(field, v, isValidLabelValue));
  }
  return errs;
};

export const validateAnnotations = (annotations: Record<string, string> | undefined, field: string): FieldError[] => {
  let size = 0;
  const errs: FieldError[] = [];
  for (const k in annotations) {
    const v = annotations[k]!;
    const key = k.toLowerCase();
    if (isQualifiedName(key).length > 0) errs.push(...check(field, key, isQualifiedName));
    size += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (size > TotalAnnotationSizeLimitB) errs.push(tooLong(field, TotalAnnotationSizeLimitB));
  return errs;
};

/** A required string field: `Required value` when absent or empty. */
export const requireString = (value: unknown, field: string): FieldError[] =>
  typeof value === 'string' && value.length > 0 ? [] : [required(field)];
