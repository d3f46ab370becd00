/**
 * Every controller, once: its kube-controller-manager name and the aliases it had before 1.28
 * (cmd/kube-controller-manager/names), whether `--controllers=*` turns it on, the ServiceAccount in
 * kube-system it acts as (bound to `system:controller:<serviceAccount>`, auth/bootstrap/controller-roles.ts),
 * and its start. Adding a controller is one folder and one entry here.
 *
 * `apiServer` marks the API server's own loops (kube-apiserver runs its CRD controller and storage
 * upkeep itself): they run in every API server as system:apiserver, whether the controller manager
 * runs there, elsewhere, or not at all, and `--controllers` does not name them.
 */
import type { Controller, ControllerOptions } from './shared.js';
import type { ControllerContext } from './context.js';
import { startClusterRoleAggregation } from './clusterrole-aggregation/aggregation.js';
import { startCrdController } from './crd/crd.js';
import { startCronJobController } from './cronjob/cron-job.js';
import { startDaemonSetController } from './daemonset/daemon-set.js';
import { startDeploymentController } from './deployment/controller.js';
import { startDisruptionController } from './disruption/disruption.js';
import { startHorizontalPodAutoscaler, type HpaSettings } from './podautoscaler/horizontal.js';
import { startEndpointSliceController } from './endpointslice/endpoint-slices.js';
import { startEndpointsController } from './endpoints/endpoints.js';
import { startEventTtl } from './event-ttl/event-ttl.js';
import { startGarbageCollector } from './garbage-collector/gc.js';
import { startJobController } from './job/job.js';
import { startNamespaceController } from './namespace/namespace.js';
import { startNodeIpam, type IpamOptions } from './node-ipam/node-ipam.js';
import { startNodeLifecycle, type NodeLifecycleOptions } from './node-lifecycle/node-lifecycle.js';
import { startPodReaper } from './pod-reaper/pod-reaper.js';
import { ReplicaSets, ReplicationControllers, startReplicaController } from './replicaset/replica-set.js';
import { startResourceQuotaController } from './resource-quota/resource-quota.js';
import { startStatefulSetController } from './statefulset/stateful-set.js';
import { startTtlAfterFinished } from './ttl-after-finished/ttl-after-finished.js';
import { startServiceController } from './serving-service/service.js';
import { startConfigurationController } from './serving-configuration/configuration.js';
import { startRevisionController } from './serving-revision/revision.js';
import { startRouteController } from './serving-route/route.js';
import { startDomainMappingController } from './serving-domainmapping/domain-mapping.js';
import { startRevisionGc } from './serving-gc/gc.js';
import { startPingSourceController } from './source-ping/ping-source.js';
import { startApiServerSourceController } from './source-apiserver/apiserver-source.js';
import { startSinkBindingController } from './source-sinkbinding/sink-binding.js';
import { startContainerSourceController } from './source-container/container-source.js';
import { startSequenceController } from './flows-sequence/sequence.js';
import { startParallelController } from './flows-parallel/parallel.js';
import { startChannelController } from './messaging-channel/channel.js';
import { startAutoscaler } from './serving-autoscaler/autoscaler.js';
import { whenServed } from '../serving/kinds.js';
import { startCsrApproving } from '../certificates/approver.js';
import { startCsrCleaner } from '../certificates/cleaner.js';
import { startCsrSigning } from '../certificates/signing.js';
import type { CertificateAuthorityKeys } from '../certificates/x509.js';

/** What the starts are configured with (the flags of `serve` and `controller-manager`). */
export interface ControllerSettings extends ControllerOptions {
  /** Node IPAM (pod CIDRs) and node lifecycle (health, taints, evictions). */
  nodes?: IpamOptions & NodeLifecycleOptions;
  /** How long an Event lives after its last occurrence (kube-apiserver's --event-ttl; default 1 h). */
  eventTtlMs?: number;
  /** The CA approved CertificateSigningRequests are signed with (kube-controller-manager's --cluster-signing-*-file). */
  signing?: CertificateAuthorityKeys;
  /** The API server's URL as clients in the cluster reach it (ControllerContext.apiServerUrl). */
  apiServerUrl?: string;
  /** The serving gateway's URL (ControllerContext.gatewayUrl). */
  gatewayUrl?: () => string | undefined;
  /** The horizontal pod autoscaler's --horizontal-pod-autoscaler-* settings (sync period, stabilization, tolerance). */
  horizontalPodAutoscaler?: HpaSettings;
}

export interface ControllerDescriptor {
  name: string;
  /** The names kube-controller-manager accepted before 1.28. */
  aliases: readonly string[];
  /** On under `*` (kube-controller-manager's disabledByDefault set is the others). */
  byDefault: boolean;
  /** The kube-system ServiceAccount it acts as; absent for the API server's own loops. */
  serviceAccount?: string;
  /** One of the API server's own loops (see above). */
  apiServer?: boolean;
  start(ctx: ControllerContext, settings: ControllerSettings): Controller;
}

const common = ({ nodes: _n, eventTtlMs: _e, signing: _s, apiServerUrl: _a, gatewayUrl: _g, horizontalPodAutoscaler: _h, ...rest }: ControllerSettings): ControllerOptions => rest;

const Idle: Controller = { stop: async () => undefined };

export const Controllers: readonly ControllerDescriptor[] = [
  // The API server's own.
  { name: 'crd-controller', aliases: [], byDefault: true, apiServer: true, start: (ctx, s) => (ctx.registry ? startCrdController(ctx.registry, common(s)) : Idle) },
  { name: 'pod-reaper', aliases: [], byDefault: true, apiServer: true, start: (ctx, s) => startPodReaper(ctx.client, common(s)) },
  { name: 'event-ttl-controller', aliases: [], byDefault: true, apiServer: true, start: (ctx, s) => startEventTtl(ctx.client, { ...common(s), eventTtlMs: s.eventTtlMs }) },
  // kube-controller-manager's.
  { name: 'garbage-collector-controller', aliases: ['garbagecollector'], byDefault: true, serviceAccount: 'generic-garbage-collector', start: (ctx, s) => startGarbageCollector(ctx.client, common(s)) },
  { name: 'namespace-controller', aliases: ['namespace'], byDefault: true, serviceAccount: 'namespace-controller', start: (ctx, s) => startNamespaceController(ctx.client, common(s)) },
  { name: 'clusterrole-aggregation-controller', aliases: ['clusterrole-aggregation'], byDefault: true, serviceAccount: 'clusterrole-aggregation-controller', start: (ctx, s) => startClusterRoleAggregation(ctx.client, common(s)) },
  { name: 'deployment-controller', aliases: ['deployment'], byDefault: true, serviceAccount: 'deployment-controller', start: (ctx) => startDeploymentController(ctx) },
  { name: 'replicaset-controller', aliases: ['replicaset'], byDefault: true, serviceAccount: 'replicaset-controller', start: (ctx) => startReplicaController(ctx, ReplicaSets) },
  { name: 'replicationcontroller-controller', aliases: ['replicationcontroller'], byDefault: true, serviceAccount: 'replication-controller', start: (ctx) => startReplicaController(ctx, ReplicationControllers) },
  { name: 'statefulset-controller', aliases: ['statefulset'], byDefault: true, serviceAccount: 'statefulset-controller', start: (ctx) => startStatefulSetController(ctx) },
  { name: 'daemonset-controller', aliases: ['daemonset'], byDefault: true, serviceAccount: 'daemon-set-controller', start: (ctx) => startDaemonSetController(ctx) },
  { name: 'job-controller', aliases: ['job'], byDefault: true, serviceAccount: 'job-controller', start: (ctx) => startJobController(ctx) },
  { name: 'cronjob-controller', aliases: ['cronjob'], byDefault: true, serviceAccount: 'cronjob-controller', start: (ctx) => startCronJobController(ctx) },
  { name: 'resourcequota-controller', aliases: ['resourcequota'], byDefault: true, serviceAccount: 'resourcequota-controller', start: (ctx) => startResourceQuotaController(ctx) },
  { name: 'horizontal-pod-autoscaler-controller', aliases: ['horizontalpodautoscaling'], byDefault: true, serviceAccount: 'horizontal-pod-autoscaler', start: (ctx, s) => startHorizontalPodAutoscaler(ctx, s.horizontalPodAutoscaler) },
  { name: 'disruption-controller', aliases: ['disruption'], byDefault: true, serviceAccount: 'disruption-controller', start: (ctx) => startDisruptionController(ctx) },
  { name: 'ttl-after-finished-controller', aliases: ['ttl-after-finished'], byDefault: true, serviceAccount: 'ttl-after-finished-controller', start: (ctx, s) => startTtlAfterFinished(ctx.client, common(s)) },
  { name: 'endpoints-controller', aliases: ['endpoint'], byDefault: true, serviceAccount: 'endpoint-controller', start: (ctx) => startEndpointsController(ctx) },
  { name: 'endpointslice-controller', aliases: ['endpointslice'], byDefault: true, serviceAccount: 'endpointslice-controller', start: (ctx) => startEndpointSliceController(ctx) },
  { name: 'node-ipam-controller', aliases: ['nodeipam'], byDefault: true, serviceAccount: 'node-controller', start: (ctx, s) => startNodeIpam(ctx.client, { ...common(s), ...s.nodes }) },
  { name: 'node-lifecycle-controller', aliases: ['nodelifecycle'], byDefault: true, serviceAccount: 'node-controller', start: (ctx, s) => startNodeLifecycle(ctx.client, { ...common(s), ...s.nodes }, ctx.informers, ctx.events.recorder('node-controller')) },
  { name: 'certificatesigningrequest-approving-controller', aliases: ['csrapproving'], byDefault: true, serviceAccount: 'certificate-controller', start: (ctx, s) => startCsrApproving(ctx, common(s)) },
  { name: 'certificatesigningrequest-signing-controller', aliases: ['csrsigning'], byDefault: true, serviceAccount: 'certificate-controller', start: (ctx, s) => startCsrSigning(ctx, s.signing, common(s)) },
  // Knative Serving's (its controller's reconcilers), started once serve's CRDs for the kinds are served.
  { name: 'serving-service-controller', aliases: [], byDefault: true, serviceAccount: 'serving-controller', start: (ctx) => whenServed(ctx, ['services', 'configurations', 'routes'], startServiceController) },
  { name: 'serving-configuration-controller', aliases: [], byDefault: true, serviceAccount: 'serving-controller', start: (ctx) => whenServed(ctx, ['configurations', 'revisions'], startConfigurationController) },
  { name: 'serving-revision-controller', aliases: [], byDefault: true, serviceAccount: 'serving-controller', start: (ctx) => whenServed(ctx, ['revisions'], startRevisionController) },
  { name: 'serving-route-controller', aliases: [], byDefault: true, serviceAccount: 'serving-controller', start: (ctx) => whenServed(ctx, ['routes', 'configurations', 'revisions'], startRouteController) },
  { name: 'serving-domainmapping-controller', aliases: [], byDefault: true, serviceAccount: 'serving-controller', start: (ctx) => whenServed(ctx, ['domainMappings', 'routes'], startDomainMappingController) },
  { name: 'serving-gc-controller', aliases: [], byDefault: true, serviceAccount: 'serving-controller', start: (ctx) => whenServed(ctx, ['configurations', 'revisions'], startRevisionGc) },
  // Knative Eventing's sources (their reconcilers and adapters), once serve's CRDs for them are served.
  { name: 'source-ping-controller', aliases: [], byDefault: true, serviceAccount: 'eventing-controller', start: (ctx) => whenServed(ctx, ['pingSources'], startPingSourceController) },
  { name: 'source-apiserver-controller', aliases: [], byDefault: true, serviceAccount: 'eventing-controller', start: (ctx) => whenServed(ctx, ['apiServerSources'], startApiServerSourceController) },
  { name: 'source-sinkbinding-controller', aliases: [], byDefault: true, serviceAccount: 'eventing-controller', start: (ctx) => whenServed(ctx, ['sinkBindings'], startSinkBindingController) },
  { name: 'source-container-controller', aliases: [], byDefault: true, serviceAccount: 'eventing-controller', start: (ctx) => whenServed(ctx, ['containerSources', 'sinkBindings', 'deployments'], startContainerSourceController) },
  // Knative Eventing's flows, started once serve's CRDs for the kinds are served (with the broker).
  { name: 'flows-sequence-controller', aliases: [], byDefault: true, serviceAccount: 'flows-controller', start: (ctx) => whenServed(ctx, ['sequences', 'channels', 'inMemoryChannels', 'subscriptions'], startSequenceController) },
  { name: 'messaging-channel-controller', aliases: [], byDefault: true, serviceAccount: 'flows-controller', start: (ctx) => whenServed(ctx, ['channels', 'inMemoryChannels'], startChannelController) },
  { name: 'flows-parallel-controller', aliases: [], byDefault: true, serviceAccount: 'flows-controller', start: (ctx) => whenServed(ctx, ['parallels', 'channels', 'inMemoryChannels', 'subscriptions'], startParallelController) },
  { name: 'serving-autoscaler', aliases: [], byDefault: true, serviceAccount: 'serving-controller', start: (ctx) => whenServed(ctx, ['revisions'], startAutoscaler) },
  { name: 'certificatesigningrequest-cleaner-controller', aliases: ['csrcleaner'], byDefault: true, serviceAccount: 'certificate-controller', start: (ctx, s) => startCsrCleaner(ctx, common(s)) },
];
