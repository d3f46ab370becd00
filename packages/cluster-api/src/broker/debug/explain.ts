/**
 * Why a Trigger's filter refused an event, in the user's terms, for the debugger: the attribute of
 * `spec.filter.attributes` that is absent or differs, or the first of `spec.filters` (which replaces
 * `spec.filter` when non-empty) that does not match.
 */
import { attributeString, type CloudEvent } from '../event/event.js';
import { compileFilter } from '../filter/filters.js';
import type { Trigger } from '../types.js';

export function explainMismatch(spec: Trigger['spec'], attributes: CloudEvent['attributes']): string {
  if (spec.filters && spec.filters.length > 0) {
    for (const f of spec.filters) {
      const one = compileFilter({ ...spec, filters: [f] });
      if ('predicate' in one && !one.predicate(attributes)) return `spec.filters: ${JSON.stringify(f)} does not match`;
    }
    return 'spec.filters does not match';
  }
  for (const [name, want] of Object.entries(spec.filter?.attributes ?? {})) {
    const got = attributes[name];
    if (got === undefined) return `attribute ${name} is absent; the filter wants ${want === '' ? 'it present' : JSON.stringify(want)}`;
    if (want !== '' && attributeString(got) !== want) return `${name} is ${JSON.stringify(attributeString(got))}; the filter wants ${JSON.stringify(want)}`;
  }
  return 'the filter does not match';
}
