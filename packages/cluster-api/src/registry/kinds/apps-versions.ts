/**
 * The apps kinds at the group versions the spec lists beside apps/v1 (apps/v1beta1: Deployment,
 * StatefulSet, ControllerRevision; extensions/v1beta1: Deployment, DaemonSet, ReplicaSet): the same
 * objects, stored as apps/v1, with each version's own defaults (SetDefaults_* of apps/v1beta1 and
 * extensions/v1beta1: the selector and labels default to the template's; extensions keeps every
 * revision and sets no progress deadline) and a mutable selector, as Kubernetes allows there.
 * The fields apps/v1 lost are kept in the annotations Kubernetes' conversions use.
 */
import type { KubeObject } from '../../api/meta.js';
import type { Conversion, ResourceDefinition } from '../definition.js';
import { servedAt } from '../versions.js';
import { scale } from '../subresources/scale.js';
import { child, obj, spec } from './common.js';
import { controllerRevision } from './controller-revision.js';
import { daemonSet, daemonSetStrategy, defaultDaemonSet } from './daemon-set.js';
import { deployment, deploymentStrategy, replicasSelector } from './deployment.js';
import { replicaSet, replicaSetStrategy } from './replica-set.js';
import { statefulSet, statefulSetStrategy } from './stateful-set.js';
import { selectorFromTemplate } from './workload.js';

const MaxInt32 = 2147483647;

/** A spec field of the beta versions kept in apps/v1 as an annotation (Kubernetes' deprecated.* annotations). */
const viaAnnotation = (annotation: string, read: (o: KubeObject) => unknown, write: (o: KubeObject, v: number | undefined) => void): Conversion => ({
  toStorage(o) {
    const v = read(o);
    write(o, undefined);
    const annotations = { ...o.metadata.annotations };
    delete annotations[annotation];
    if (typeof v === 'number') annotations[annotation] = String(v);
    if (Object.keys(annotations).length) o.metadata.annotations = annotations;
    else delete o.metadata.annotations;
  },
  fromStorage(o) {
    const v = o.metadata.annotations?.[annotation];
    if (v === undefined) return;
    const annotations = { ...o.metadata.annotations };
    delete annotations[annotation];
    o.metadata.annotations = annotations;
    if (Object.keys(annotations).length === 0) delete o.metadata.annotations;
    if (/^-?\d+$/.test(v)) write(o, Number(v));
  },
});

/** spec.rollbackTo.revision ↔ `deprecated.deployment.rollback.to`. */
const rollbackTo = viaAnnotation('deprecated.deployment.rollback.to', (o) => obj(spec(o).rollbackTo).revision, (o, v) => {
  if (v === undefined) delete child(o, 'spec').rollbackTo;
  else child(o, 'spec').rollbackTo = { revision: v };
});

/** extensions/v1beta1 DaemonSet spec.templateGeneration ↔ `deprecated.daemonset.template.generation`. */
const templateGeneration = viaAnnotation('deprecated.daemonset.template.generation', (o) => spec(o).templateGeneration, (o, v) => {
  if (v === undefined) delete child(o, 'spec').templateGeneration;
  else child(o, 'spec').templateGeneration = v;
});

const betaScale = (group: string) => scale(replicasSelector, undefined, { group, version: 'v1beta1' });
const statusOf = (def: ResourceDefinition) => def.subresources!.status!;

const appsV1beta1 = { group: 'apps', version: 'v1beta1' };
const extensions = { group: 'extensions', version: 'v1beta1' };

export const deploymentAppsV1beta1 = servedAt(deployment, appsV1beta1, {
  conversion: rollbackTo,
  strategy: deploymentStrategy({ surge: '25%', unavailable: '25%', revisionHistoryLimit: 2, progressDeadlineSeconds: 600 }, selectorFromTemplate, false),
  subresources: { status: statusOf(deployment), scale: betaScale('apps') },
});

/** Also /rollback in Kubernetes 1.7's extensions; here the spec.rollbackTo field asks for one. */
export const deploymentExtensions = servedAt(deployment, extensions, {
  conversion: rollbackTo,
  strategy: deploymentStrategy({ surge: 1, unavailable: 1, revisionHistoryLimit: MaxInt32, progressDeadlineSeconds: MaxInt32 }, selectorFromTemplate, false),
  subresources: { status: statusOf(deployment), scale: betaScale('extensions') },
  // kubectl 1.32 warns when a short name matches a resource of another group; Kubernetes 1.7's extensions had none in `all` either.
  categories: undefined,
  shortNames: undefined,
});

export const statefulSetAppsV1beta1 = servedAt(statefulSet, appsV1beta1, {
  strategy: statefulSetStrategy(selectorFromTemplate),
  subresources: { status: statusOf(statefulSet), scale: scale(replicasSelector, undefined, appsV1beta1) },
});

export const controllerRevisionAppsV1beta1 = servedAt(controllerRevision, appsV1beta1);

export const daemonSetExtensions = servedAt(daemonSet, extensions, {
  conversion: templateGeneration,
  strategy: daemonSetStrategy((o) => {
    selectorFromTemplate(o);
    const s = child(o, 'spec');
    // extensions/v1beta1 defaults to OnDelete, as Kubernetes 1.7 did.
    if (!obj(s.updateStrategy).type) s.updateStrategy = { type: 'OnDelete' };
    if (s.templateGeneration === undefined) s.templateGeneration = 1;
    defaultDaemonSet(o);
  }, false),
  categories: undefined,
  shortNames: undefined,
});

export const replicaSetExtensions = servedAt(replicaSet, extensions, {
  strategy: replicaSetStrategy(selectorFromTemplate, false),
  subresources: { status: statusOf(replicaSet), scale: betaScale('extensions') },
  categories: undefined,
  shortNames: undefined,
});

export const appsServedVersions: readonly ResourceDefinition[] = [
  controllerRevisionAppsV1beta1, deploymentAppsV1beta1, statefulSetAppsV1beta1,
  daemonSetExtensions, deploymentExtensions, replicaSetExtensions,
];
