/**
 * Event: core/v1 (what `kubectl describe` and `kubectl get events` read) and events.k8s.io/v1 (what
 * newer recorders write), one object set stored as core/v1, converted as Kubernetes' events/v1
 * conversion does (regarding ↔ involvedObject, note ↔ message, reportingController ↔
 * reportingComponent, deprecated* ↔ the old fields). Validation is Kubernetes' ValidateEventCreate:
 * lenient for core/v1, strict for events.k8s.io/v1 (eventTime, reportingController,
 * reportingInstance, action, reason required; the deprecated fields unset). Field selectors on the
 * involved object are what `kubectl describe` lists events by.
 */
import type { KubeObject } from '../../api/meta.js';
import type { Conversion, ResourceDefinition } from '../definition.js';
import { check, invalidValue, isDNS1123Subdomain, isQualifiedName, required, type FieldError } from '../generic/validation.js';
import { servedAt } from '../versions.js';
import { AllVerbs, column, core, normalizeMicroTimes, num, obj, str } from './common.js';
import { humanAge, nameColumn } from './columns.js';

const ReportingInstanceLengthLimit = 128;
const ActionLengthLimit = 128;
const ReasonLengthLimit = 128;
const NoteLengthLimit = 1024;

const atMost = (field: string, value: unknown, limit: number): FieldError[] =>
  str(value).length > limit ? [invalidValue(field, '', `can have at most ${limit} characters`)] : [];

/** legacyValidateEvent: for every version; `reportingField` is the request version's name of the reporting controller. */
const validateLegacy = (o: KubeObject, reportingField: string): FieldError[] => {
  const errs: FieldError[] = [];
  const involved = obj(o.involvedObject);
  const ns = o.metadata.namespace ?? '';
  const involvedNs = str(involved.namespace);
  if (!o.eventTime) {
    const ok = involvedNs ? ns === involvedNs : ns === '' || ns === 'default';
    if (!ok) errs.push(invalidValue('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
  } else {
    if (!involvedNs && ns !== 'default' && ns !== 'kube-system') errs.push(invalidValue('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
    if (!str(o.reportingComponent)) errs.push(required(reportingField));
    errs.push(...check(reportingField, str(o.reportingComponent), isQualifiedName));
    if (!str(o.reportingInstance)) errs.push(required('reportingInstance'));
    errs.push(...atMost('reportingInstance', o.reportingInstance, ReportingInstanceLengthLimit));
    if (!str(o.action)) errs.push(required('action'));
    errs.push(...atMost('action', o.action, ActionLengthLimit));
    if (!str(o.reason)) errs.push(required('reason'));
    errs.push(...atMost('reason', o.reason, ReasonLengthLimit));
    errs.push(...atMost('message', o.message, NoteLengthLimit));
  }
  if (ns) errs.push(...check('namespace', ns, isDNS1123Subdomain));
  return errs;
};

/** The strict rules of events.k8s.io/v1 (on the object as stored: core/v1 field names). */
const validateV1 = (o: KubeObject): FieldError[] => {
  const errs = validateLegacy(o, 'reportingController');
  const series = obj(o.series);
  if (o.series !== undefined && o.series !== null) {
    if (num(series.count) < 2) errs.push(invalidValue('series.count', '', 'should be at least 2'));
    if (!series.lastObservedTime) errs.push(required('series.lastObservedTime'));
  }
  if (!o.eventTime) errs.push(required('eventTime'));
  if (o.type !== 'Normal' && o.type !== 'Warning') errs.push(invalidValue('type', '', `has invalid value: ${str(o.type)}`));
  if (o.firstTimestamp) errs.push(invalidValue('firstTimestamp', '', 'needs to be unset'));
  if (o.lastTimestamp) errs.push(invalidValue('lastTimestamp', '', 'needs to be unset'));
  if (num(o.count) !== 0) errs.push(invalidValue('count', '', 'needs to be unset'));
  const source = obj(o.source);
  if (str(source.component) || str(source.host)) errs.push(invalidValue('source', '', 'needs to be unset'));
  return errs;
};

/** eventTime and series.lastObservedTime are MicroTimes: stored as Kubernetes writes them. */
const canonicalizeTimes = (o: KubeObject): void => {
  normalizeMicroTimes(o as Record<string, unknown>, ['eventTime']);
  if (o.series && typeof o.series === 'object') normalizeMicroTimes(o.series as Record<string, unknown>, ['lastObservedTime']);
};

/** `kind/name` of the involved object, as printEvent's Object column. */
const target = (involved: Record<string, unknown>): string =>
  str(involved.name) ? `${str(involved.kind).toLowerCase()}/${str(involved.name)}` : str(involved.kind).toLowerCase();

const firstSeen = (o: KubeObject): string => (o.firstTimestamp ? humanAge(o.firstTimestamp) : humanAge(o.eventTime));
const lastSeen = (o: KubeObject): string => {
  if (o.series) return humanAge(obj(o.series).lastObservedTime);
  return o.lastTimestamp ? humanAge(o.lastTimestamp) : firstSeen(o);
};
const source = (o: KubeObject): string => {
  const component = str(obj(o.source).component) || str(o.reportingComponent);
  const host = str(obj(o.source).host) || str(o.reportingInstance);
  return host ? `${component}, ${host}` : component;
};

/** The involved object's fields plus reason, source and type: the keys Kubernetes' event field label conversion accepts. */
const fieldsOf = (o: KubeObject): Record<string, string> => {
  const involved = obj(o.involvedObject);
  const f = (k: string) => str(involved[k]);
  return {
    'involvedObject.kind': f('kind'), 'involvedObject.namespace': f('namespace'), 'involvedObject.name': f('name'),
    'involvedObject.uid': f('uid'), 'involvedObject.apiVersion': f('apiVersion'), 'involvedObject.resourceVersion': f('resourceVersion'),
    'involvedObject.fieldPath': f('fieldPath'), reason: str(o.reason), reportingComponent: str(o.reportingComponent),
    source: str(obj(o.source).component), type: str(o.type),
  };
};

export const event = core({
  kind: 'Event',
  plural: 'events',
  singular: 'event',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['ev'],
  fields: ['involvedObject', 'reason', 'message', 'source', 'firstTimestamp', 'lastTimestamp', 'count', 'type', 'eventTime',
    'series', 'action', 'related', 'reportingComponent', 'reportingInstance'],
  strategy: {
    validate: (o) => validateLegacy(o, 'reportingComponent'),
    canonicalize: canonicalizeTimes,
    generationChanged: () => false,
    fieldsOf,
  },
  columnLayout: 'own',
  columns: [
    column('Last Seen', lastSeen, { description: 'The time at which the most recent occurrence of this event was recorded.' }),
    column('Type', (o) => str(o.type), { description: 'Type of this event (Normal, Warning), new types could be added in the future' }),
    column('Reason', (o) => str(o.reason), { description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status." }),
    column('Object', (o) => target(obj(o.involvedObject)), { description: 'The object that this event is about.' }),
    column('Subobject', (o) => str(obj(o.involvedObject).fieldPath), { priority: 1, description: 'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].' }),
    column('Source', source, { priority: 1, description: 'The component reporting this event. Should be a short machine understandable string.' }),
    column('Message', (o) => str(o.message).trim(), { description: 'A human-readable description of the status of this operation.' }),
    column('First Seen', firstSeen, { priority: 1, description: 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)' }),
    column('Count', (o) => (o.series ? num(obj(o.series).count) : num(o.count) || 1), { priority: 1, description: 'The number of times this event has occurred.' }),
    { ...nameColumn, priority: 1 },
  ],
});

/** events.k8s.io/v1 name ↔ core/v1 name (Kubernetes' Convert_v1_Event_To_core_Event and back). */
const Renamed: readonly (readonly [string, string])[] = [
  ['regarding', 'involvedObject'], ['note', 'message'], ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'], ['deprecatedFirstTimestamp', 'firstTimestamp'], ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

const rename = (o: KubeObject, from: 0 | 1): void => {
  for (const pair of Renamed) {
    const [a, b] = [pair[from], pair[1 - from]!];
    if (Object.hasOwn(o, a)) (o[b] = o[a]), delete o[a];
  }
};

const eventsConversion: Conversion = { toStorage: (o) => rename(o, 0), fromStorage: (o) => rename(o, 1) };

const storedForm = (o: KubeObject): KubeObject => {
  const stored = structuredClone(o);
  rename(stored, 0);
  return stored;
};

/** The same rules on the stored form, so field paths name core/v1 fields as Kubernetes' internal ones do. */
const asStored = <T>(rule: (o: KubeObject) => T) => (o: KubeObject): T => rule(storedForm(o));

/** events.k8s.io field labels: the core ones, and regarding.* and reportingController by their own names. */
const fieldsOfV1 = (o: KubeObject): Record<string, string> => {
  const f = fieldsOf(storedForm(o));
  const regarding = Object.entries(f).filter(([k]) => k.startsWith('involvedObject.')).map(([k, v]) => [k.replace('involvedObject.', 'regarding.'), v]);
  return { ...f, ...Object.fromEntries(regarding), reportingController: f.reportingComponent! };
};

export const eventsV1: ResourceDefinition = servedAt(event, { group: 'events.k8s.io', version: 'v1' }, {
  conversion: eventsConversion,
  fields: ['eventTime', 'series', 'reportingController', 'reportingInstance', 'action', 'reason', 'regarding', 'related', 'note', 'type',
    'deprecatedSource', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount'],
  strategy: {
    validate: asStored(validateV1),
    canonicalize: canonicalizeTimes,
    generationChanged: () => false,
    fieldsOf: fieldsOfV1,
  },
  columns: event.columns!.map((c) => ({ ...c, cell: asStored(c.cell) })),
  // `ev` stays core/v1's: kubectl 1.32 warns when a short name matches in two groups.
  shortNames: undefined,
});
