/**
 * PriorityClass (scheduling.k8s.io/v1, cluster-scoped, top-level fields): ValidatePriorityClass —
 * user classes up to 1,000,000,000, the `system-` prefix reserved for the two built-in classes,
 * value and preemptionPolicy fixed once created; preemptionPolicy defaults to PreemptLowerPriority.
 * kube-apiserver creates system-cluster-critical and system-node-critical at start
 * (ensureSystemPriorityClasses), so they are here from the start too.
 */
import type { KubeObject } from '../../api/meta.js';
import { forbiddenField, invalidValue, notSupported, required, type FieldError } from '../generic/validation.js';
import { isApiError } from '../../api/errors.js';
import type { Registry } from '../rest.js';
import { AllVerbs, column, inGroup, setDefault, str, type Obj } from './common.js';
import { ageColumn, nameColumn } from './columns.js';

const HighestUserDefinablePriority = 1_000_000_000;
const Policies = ['Never', 'PreemptLowerPriority'] as const;

export const SystemPriorityClasses = [
  { name: 'system-node-critical', value: 2_000_001_000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { name: 'system-cluster-critical', value: 2_000_000_000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
];

const validate = (o: KubeObject): FieldError[] => {
  const name = o.metadata.name ?? '';
  const errs: FieldError[] = [];
  if (typeof o.value !== 'number' || !Number.isInteger(o.value)) errs.push(required('value'));
  const system = SystemPriorityClasses.find((c) => c.name === name);
  if (system) {
    if (o.value !== system.value) errs.push(invalidValue('metadata.name', name, `name is reserved for a system priority class with value ${system.value}`));
  } else if (name.startsWith('system-')) {
    errs.push(forbiddenField('metadata.name', "priority class names with 'system-' prefix are reserved."));
  } else if (typeof o.value === 'number' && o.value > HighestUserDefinablePriority) {
    errs.push(forbiddenField('value', `maximum allowed value of a user defined priority is ${HighestUserDefinablePriority}`));
  }
  if (!Policies.includes(o.preemptionPolicy as never)) errs.push(notSupported('preemptionPolicy', o.preemptionPolicy ?? '', Policies));
  return errs;
};

const validateUpdate = (o: KubeObject, old: KubeObject): FieldError[] => [
  ...(o.value !== old.value ? [forbiddenField('value', 'may not be changed in an update.')] : []),
  ...(o.preemptionPolicy !== old.preemptionPolicy ? [invalidValue('preemptionPolicy', o.preemptionPolicy, 'field is immutable')] : []),
];

const defaults = (o: KubeObject): void => setDefault(o as Obj, 'preemptionPolicy', 'PreemptLowerPriority');

export const priorityClass = inGroup('scheduling.k8s.io', 'v1')({
  kind: 'PriorityClass',
  plural: 'priorityclasses',
  singular: 'priorityclass',
  namespaced: false,
  verbs: AllVerbs,
  shortNames: ['pc'],
  fields: ['value', 'globalDefault', 'description', 'preemptionPolicy'],
  strategy: { prepareForCreate: defaults, prepareForUpdate: defaults, validate, validateUpdate, generationChanged: () => false },
  columnLayout: 'own',
  columns: [
    nameColumn,
    column('Value', (o) => (typeof o.value === 'number' ? o.value : 0), { type: 'integer', description: 'value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.' }),
    column('Global-Default', (o) => o.globalDefault === true, { type: 'boolean', description: 'globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.' }),
    ageColumn,
    column('PreemptionPolicy', (o) => str(o.preemptionPolicy), { description: 'preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.' }),
  ],
});

/** The two classes kube-apiserver keeps (created when missing; an existing one is left as it is). */
export const ensureSystemPriorityClasses = async (registry: Pick<Registry, 'find'>): Promise<void> => {
  const store = registry.find('scheduling.k8s.io', 'v1', 'priorityclasses');
  if (!store) return;
  for (const { name, value, description } of SystemPriorityClasses) {
    const body = { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value, description };
    await store.create({}, body).catch((err: unknown) => {
      if (!(isApiError(err) && err.reason === 'AlreadyExists')) throw err;
    });
  }
};
