/**
 * Knative's Configuration reconciler: each generation of a Configuration has one immutable
 * Revision, named by its template (`spec.template.metadata.name`) or `<config>-<generation, 5
 * digits>` (`hello-00001`, `-00002` …), labelled with its configuration, generation and uid and
 * controlled by the Configuration. Status: `latestCreatedRevisionName` that revision's name,
 * `latestReadyRevisionName` the newest revision that became Ready (it never moves back to an older
 * one), Ready as the latest created revision's (False with RevisionFailed when it failed).
 */
import { objectKey, splitKey, writeStatus } from '../context.js';
import { startReconciler } from '../reconciler.js';
import type { Controller } from '../shared.js';
import { ensureChild } from '../../serving/children.js';
import { conditionOf, conditionSet, type Marked } from '../../serving/conditions.js';
import { controlledBy, controllerKey, DefaultTimeoutSeconds, Kinds, Label, type Obj, type ServingEnv } from '../../serving/kinds.js';

export const revisionName = (config: Obj): string =>
  config.spec?.template?.metadata?.name || `${config.metadata.name}-${String(config.metadata.generation ?? 1).padStart(5, '0')}`;

const generationOf = (rev: Obj): number => Number(rev.metadata.labels?.[Label.configurationGeneration] ?? 0);

export function startConfigurationController(env: ServingEnv): Controller {
  const configurations = env.cache('configurations');
  const revisions = env.cache('revisions');

  const reconcile = async (key: string): Promise<void> => {
    const { namespace, name } = splitKey(key);
    const config = configurations.get(namespace, name) as Obj | undefined;
    if (!config || config.metadata.deletionTimestamp) return;
    const template = config.spec?.template ?? {};
    const revName = revisionName(config);
    const spec = { timeoutSeconds: DefaultTimeoutSeconds, containerConcurrency: 0, ...(template.spec ?? {}) };
    const created = await ensureChild(env, 'revisions', config, {
      apiVersion: 'serving.knative.dev/v1', kind: 'Revision',
      metadata: {
        name: revName, namespace,
        labels: {
          ...(template.metadata?.labels ?? {}),
          [Label.configuration]: name,
          [Label.configurationGeneration]: String(config.metadata.generation ?? 1),
          [Label.configurationUID]: config.metadata.uid!,
          ...(config.metadata.labels?.[Label.service] && { [Label.service]: config.metadata.labels[Label.service] }),
        },
        annotations: template.metadata?.annotations ?? {},
        ownerReferences: [controlledBy(config, Kinds.configurations)],
      },
      spec,
    }, []);
    const latest = created.ok ? created.object : undefined;
    // The newest Ready revision of this Configuration (by its generation), never an older one than before.
    const ready = revisions.ownedBy(config.metadata.uid!)
      .filter((r) => conditionOf(r as Obj, 'Ready')?.status === 'True')
      .sort((a, b) => generationOf(b as Obj) - generationOf(a as Obj))[0];
    const latestReady = ready?.metadata.name ?? config.status?.latestReadyRevisionName;
    const revReady = latest && conditionOf(latest, 'Ready');
    const marked: Marked = !created.ok
      ? { type: 'Ready', status: 'False', reason: 'RevisionFailed', message: created.message }
      : revReady?.status === 'False'
        ? { type: 'Ready', status: 'False', reason: 'RevisionFailed', message: `Revision "${revName}" failed with message: ${revReady.message ?? revReady.reason ?? ''}.` }
        : revReady?.status === 'True' ? { type: 'Ready', status: 'True' } : { type: 'Ready', status: 'Unknown' };
    const conditions = conditionSet(config.status?.conditions, [marked]);
    await writeStatus({ store: env.store('configurations'), cache: configurations }, config, {
      observedGeneration: config.metadata.generation,
      conditions,
      latestCreatedRevisionName: revName,
      ...(latestReady && { latestReadyRevisionName: latestReady }),
    });
  };

  const owner = controllerKey(Kinds.configurations);
  return startReconciler('serving-configuration-controller', reconcile, [
    { cache: configurations, keys: (o) => [objectKey(o)] },
    { cache: revisions, keys: owner },
  ], { log: env.ctx.log });
}
