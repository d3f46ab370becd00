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
