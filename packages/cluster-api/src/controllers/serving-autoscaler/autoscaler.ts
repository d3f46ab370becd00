/**
 * Knative's KPA for the revisions of class `kpa.autoscaling.knative.dev` (the default): once a
 * second per revision, and at once when the gateway's activator holds a request for it (the poke),
 * it reads the revision's load — its pods' own reports summed, plus what the activator holds; the
 * activator's count alone for pods that do not report — feeds it to the revision's Decider
 * (decider.ts) and sets the replicas of the revision's Deployment to the decision. Settings from
 * `config-autoscaler` (watched) and the revision's annotations (serving/autoscaling/config.ts);
 * a revision no Route sends traffic to (routingState `reserve`) has no min-scale, as Knative's
 * unreachable revisions. Each change of scale is logged and recorded as an Event on the Revision
 * (ScaledUp, ScaledDown); a refused setting as a Warning (InvalidAutoscaling). The revision
 * controller writes what follows on the Revision's status (desiredReplicas, actualReplicas, Active).
 * Each decision also says whether the revision's traffic goes through the activator (Proxy) or
 * straight to its pods (Serve), from its excess burst capacity (burst-mode.ts): marked on the
 * Revision for the gateway, each change logged and recorded as an Event (ActivatorInPath,
 * ActivatorOutOfPath).
 *
 * While the activator holds requests for a revision (a burst beyond its pods' room), the gateway's
 * load is read five times a second and each read decides the revision at once, so a step in load
 * reaches the decider within a fifth of a second, not on the next tick.
 */
import { request } from 'node:http';
import { objectKey, splitKey } from '../context.js';
import { startReconciler, type Result } from '../reconciler.js';
import { inNamespace, type Controller } from '../shared.js';
import { deploymentName } from '../serving-revision/revision.js';
import { AutoscalerConfigMap, autoscalerConfig, KpaClass, scalingSpec } from '../../serving/autoscaling/config.js';
import { Decider } from '../../serving/autoscaling/decider.js';
import { BurstModeAnnotation, burstMode, modeOf } from '../../serving/autoscaling/burst-mode.js';
import { GatewayConfigMap } from '../../serving/gateway/published.js';
import { GatewayPaths } from '../../serving/gateway/gateway.js';
import { isControlledBy, Label, type Obj, type ServingEnv } from '../../serving/kinds.js';
import { GatewayLoads, isLoadReport, scrapePod } from './scrape.js';

/** How often each revision is decided (Knative ticks every 2 s; pods here start in well under one). */
export const TickMs = 1000;
/** How long one read of the gateway's load waits for a poke; while it holds requests for a revision, a fifth of it. */
const GatewayWaitMs = 1000;
const BurstWaitMs = 200;

type Endpoints = Obj & { subsets?: { addresses?: { ip?: string }[]; ports?: { port?: number }[] }[] };

export function startAutoscaler(env: ServingEnv): Controller {
  const revisions = env.cache('revisions');
  const deployments = env.cache('deployments');
  const endpoints = env.cache('endpoints');
  const configMaps = env.cache('configMaps');
  const recorder = env.ctx.events.recorder('autoscaler');
  const log = env.ctx.log;
  const deciders = new Map<string, { decider: Decider; invalid: string }>();
  const gateway = new GatewayLoads();
  let stopped = false;

  const configData = () => (configMaps.get(AutoscalerConfigMap.namespace, AutoscalerConfigMap.name) as Obj & { data?: Record<string, string> } | undefined)?.data;

  const reconcile = async (key: string): Promise<Result | void> => {
    const { namespace, name } = splitKey(key);
    const rev = revisions.get(namespace, name) as Obj | undefined;
    if (!rev || rev.metadata.deletionTimestamp) {
      deciders.delete(key);
      gateway.forget(key);
      return;
    }
    const config = autoscalerConfig(configData());
    const parsed = scalingSpec(rev.metadata.annotations, rev.spec?.containerConcurrency, config.value);
    const spec = parsed.value;
    if (spec.class !== KpaClass) return void deciders.delete(key);
    if (rev.metadata.labels?.[Label.routingState] === 'reserve') spec.minScale = 0;
    let entry = deciders.get(key);
    if (!entry) deciders.set(key, (entry = { decider: new Decider(spec), invalid: '' }));
    entry.decider.spec = spec;
    const invalid = [...config.invalid, ...parsed.invalid].join('; ');
    if (invalid && invalid !== entry.invalid) recorder.event(rev, 'Warning', 'InvalidAutoscaling', `Ignored (the default kept): ${invalid}`);
    entry.invalid = invalid;

    const d = deployments.get(namespace, deploymentName(name)) as Obj | undefined;
    if (!d || !isControlledBy(d, rev)) return { requeueAfter: TickMs };
    const addresses = ((endpoints.get(namespace, name) as Endpoints | undefined)?.subsets ?? []).flatMap((s) =>
      (s.addresses ?? []).flatMap((a) => (a.ip && s.ports?.[0]?.port ? [{ ip: a.ip, port: s.ports[0].port }] : [])));
    const reports = (await Promise.all(addresses.map((a) => scrapePod(a.ip, a.port)))).filter((r) => r !== undefined);
    const seen = gateway.take(key);
    // Pods that report count their own requests (those the activator forwarded among them); the held ones are the activator's alone.
    const podLoad = reports.reduce((n, r) => n + (spec.metric === 'rps' ? r.rps : r.concurrency), 0);
    const held = Math.max(seen.held, seen.waiting);
    const value = reports.length > 0
      ? podLoad + (spec.metric === 'rps' ? 0 : held)
      : Math.max(spec.metric === 'rps' ? seen.rps : seen.concurrency, held);
    const now = Date.now();
    entry.decider.record(now, value);
    const current = d.spec?.replicas ?? 0;
    const decision = entry.decider.decide(now, d.status?.readyReplicas ?? 0, current);
    // Not below the initial scale before the revision first reached it (Knative's ScaleTargetInitialized).
    const initialized = (rev.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'ResourcesAvailable' && c.status === 'True');
    if (!initialized && decision.desired < current) decision.desired = current;
    if (decision.desired !== current && !stopped) {
      const written = await env.store('deployments').patch(inNamespace(namespace), d.metadata.name!, 'merge', { spec: { replicas: decision.desired } });
      deployments.observe(written.object);
      const message = `Scaled from ${current} to ${decision.desired} (${decision.reason})`;
      log?.({ level: 'info', msg: 'autoscaler scaled', revision: key, from: current, to: decision.desired, reason: decision.reason, panic: decision.panicking });
      recorder.event(rev, 'Normal', decision.desired > current ? 'ScaledUp' : 'ScaledDown', message);
    }
    const mode = burstMode(decision.desired, decision.excessBurstCapacity);
    const marked = rev.metadata.annotations?.[BurstModeAnnotation];
    if (mode !== marked && !stopped) {
      const written = await env.store('revisions').patch(inNamespace(namespace), name, 'merge', { metadata: { annotations: { [BurstModeAnnotation]: mode } } });
      revisions.observe(written.object);
      const why = `excess burst capacity ${decision.excessBurstCapacity} (target-burst-capacity ${spec.targetBurstCapacity}, ${d.status?.readyReplicas ?? 0} ready × ${spec.totalValue}, panic average ${Math.round(decision.panic * 100) / 100})`;
      log?.({ level: 'info', msg: 'autoscaler mode', revision: key, mode, excessBurstCapacity: decision.excessBurstCapacity });
      // A revision's first mark, Proxy, is what no mark meant: nothing changed to tell.
      if (marked !== undefined || mode !== modeOf(undefined)) {
        recorder.event(rev, 'Normal', mode === 'Proxy' ? 'ActivatorInPath' : 'ActivatorOutOfPath', mode === 'Proxy' ? `Traffic through the activator: ${why}` : `Traffic straight to the pods: ${why}`);
      }
    }
    return { requeueAfter: TickMs };
  };

  const reconciler = startReconciler('serving-autoscaler', reconcile, [
    { cache: revisions, keys: (o) => [objectKey(o)] },
    { cache: configMaps, keys: (o) => (o.metadata.namespace === AutoscalerConfigMap.namespace && o.metadata.name === AutoscalerConfigMap.name ? revisions.list().map(objectKey) : []) },
  ], { log, workers: 5 });

  // The gateway's load, read continuously; a poke decides the poked revisions at once.
  let pending: ReturnType<typeof request> | undefined;
  const readGateway = async (): Promise<void> => {
    let waitMs = GatewayWaitMs;
    while (!stopped) {
      const url = (configMaps.get(GatewayConfigMap.namespace, GatewayConfigMap.name) as Obj & { data?: Record<string, string> } | undefined)?.data?.url;
      const report = url ? await fetchReport(url, waitMs) : undefined;
      if (stopped) return;
      if (!report) {
        await new Promise((r) => setTimeout(r, TickMs).unref());
        continue;
      }
      gateway.add(report);
      const holding = report.revisions.filter((r) => r.held > 0 || r.waiting > 0).map((r) => `${r.namespace}/${r.revision}`);
      for (const key of new Set([...report.poked, ...holding])) reconciler.enqueue(key);
      waitMs = holding.length > 0 ? BurstWaitMs : GatewayWaitMs;
    }
  };
  const fetchReport = (base: string, waitMs: number) => new Promise<ReturnType<typeof parse>>((resolve) => {
    let target: URL;
    try {
      target = new URL(`${GatewayPaths.stats}?wait=${waitMs}`, base);
    } catch {
      return resolve(undefined);
    }
    const req = request(target, { timeout: waitMs + 5000 }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve(res.statusCode === 200 ? parse(text) : undefined)).on('error', () => resolve(undefined));
    });
    pending = req;
    req.on('timeout', () => req.destroy()).on('error', () => resolve(undefined)).end();
  });
  const parse = (text: string) => {
    try {
      const body: unknown = JSON.parse(text);
      return isLoadReport(body) ? body : undefined;
    } catch {
      return undefined;
    }
  };
  void readGateway();

  return {
    stop: async () => {
      stopped = true;
      pending?.destroy();
      await reconciler.stop();
    },
  };
}
