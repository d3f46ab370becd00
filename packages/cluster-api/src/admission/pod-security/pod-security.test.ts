import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.js';
import { MemoryStorage } from '../../storage/memory/memory.js';
import { createRegistry } from '../../registry/index.js';
import { describe as describeViolations, violations } from './checks.js';

const registry = createRegistry(new MemoryStorage());
const namespaces = registry.find('', 'v1', 'namespaces')!;
const pods = registry.find('', 'v1', 'pods')!;
const deployments = registry.find('apps', 'v1', 'deployments')!;

const pod = (name: string, spec: Record<string, unknown> = {}, container: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx', ...container }], ...spec },
});
const restrictedContainer = { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } };
const restrictedPod = { securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } };
const refusal = async (p: Promise<unknown>) => {
  const err = (await p.then(() => undefined, (e: unknown) => e)) as { code?: number; message?: string } | undefined;
  return err && { code: err.code, message: err.message };
};
const labelled = (name: string, labels: Record<string, string>) => namespaces.create({}, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });

describe('PodSecurity', () => {
  beforeAll(async () => {
    await labelled('open', {});
    await labelled('strict', { 'pod-security.kubernetes.io/enforce': 'restricted' });
    await labelled('watched', { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/warn': 'restricted', 'pod-security.kubernetes.io/warn-version': 'v1.30' });
  });

  it('refuses at enforce=restricted with the upstream message; a pod that meets it is admitted', async () => {
    expect(await refusal(pods.create({ namespace: 'strict' }, pod('root')))).toEqual({
      code: 403,
      message: 'pods "root" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    });
    expect((await pods.create({ namespace: 'strict' }, pod('ok', restrictedPod, restrictedContainer))).object.metadata.name).toBe('ok');
    expect((await pods.create({ namespace: 'open' }, pod('anything', { hostNetwork: true }, { securityContext: { privileged: true } }))).object.metadata.name).toBe('anything');
  });

  it('warns at the warn level and enforces baseline beside it', async () => {
    const ctx = { namespace: 'watched' } as { namespace: string; warnings?: string[] };
    await pods.create(ctx, pod('plain'));
    expect(ctx.warnings).toEqual([expect.stringMatching(/^would violate PodSecurity "restricted:v1.30": allowPrivilegeEscalation != false/)]);
    expect(await refusal(pods.create({ namespace: 'watched' }, pod('host', { hostNetwork: true, hostPID: true, volumes: [{ name: 'root', hostPath: { path: '/' } }] }, { securityContext: { privileged: true, capabilities: { add: ['SYS_ADMIN', 'CHOWN'] } }, ports: [{ containerPort: 80, hostPort: 80 }] })))).toEqual({
      code: 403,
      message: 'pods "host" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "c" must not include "SYS_ADMIN" in securityContext.capabilities.add), host namespaces (hostNetwork=true, hostPID=true), hostPath volumes (volume "root"), hostPort (container "c" uses hostPort 80), privileged (container "c" must not set securityContext.privileged=true)',
    });
  });

  it('only warns for workloads, about their pod template', async () => {
    const ctx = { namespace: 'strict' } as { namespace: string; warnings?: string[] };
    const template = { metadata: { labels: { app: 'w' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
    await deployments.create(ctx, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'w' }, spec: { selector: { matchLabels: { app: 'w' } }, template } });
    expect(ctx.warnings).toEqual([expect.stringMatching(/^would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "c"/)]);
    // A change outside the template is not judged again.
    const again = { namespace: 'strict' } as { namespace: string; warnings?: string[] };
    await deployments.patch(again, 'w', 'merge', { spec: { replicas: 3 } });
    expect(again.warnings).toBeUndefined();
  });

  it('warns, when a namespace gets a stricter enforce level, about the pods it holds that break it', async () => {
    await labelled('existing', {});
    const ns = { namespace: 'existing' };
    await pods.create(ns, pod('host-a', { hostNetwork: true }));
    await pods.create(ns, pod('host-b', { hostNetwork: true }));
    await pods.create(ns, pod('priv', {}, { securityContext: { privileged: true } }));
    await pods.create(ns, pod('fine'));
    const ctx = {} as { warnings?: string[] };
    await namespaces.patch(ctx, 'existing', 'merge', { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } });
    expect(ctx.warnings).toEqual(['existing pods in namespace "existing" violate the new PodSecurity enforce level "baseline:latest"', 'host-a (and 1 other pods): host namespaces', 'priv: privileged']);
    // The same level again, or another label: nothing to say.
    const again = {} as { warnings?: string[] };
    await namespaces.patch(again, 'existing', 'merge', { metadata: { labels: { team: 'a' } } });
    expect(again.warnings).toBeUndefined();
  });

  it('words each check as upstream', () => {
    const spec = (s: Record<string, unknown>) => ({ metadata: {}, spec: s });
    expect(describeViolations(violations('restricted', spec({
      securityContext: { runAsNonRoot: false, runAsUser: 0, seccompProfile: { type: 'Unconfined' }, sysctls: [{ name: 'kernel.msgmax', value: '1' }] },
      volumes: [{ name: 'h', hostPath: { path: '/x' } }, { name: 'g', gitRepo: {} }],
      containers: [{ name: 'a', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_RAW'] }, procMount: 'Unmasked', seLinuxOptions: { type: 'spc_t' } } }],
    })))).toBe([
      // At restricted, the stricter forms replace baseline's capabilities, hostPath and seccomp checks.
      'unrestricted capabilities (container "a" must not include "NET_RAW" in securityContext.capabilities.add)',
      'procMount (container "a" must not set securityContext.procMount to "Unmasked")',
      'restricted volume types (volumes "h", "g" use restricted volume types "gitRepo", "hostPath")',
      'runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)',
      'runAsUser=0 (pod must not set runAsUser=0)',
      'seLinuxOptions (container "a" set forbidden securityContext.seLinuxOptions: type "spc_t")',
      'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
      'forbidden sysctls (kernel.msgmax)',
    ].join(', '));
    expect(describeViolations(violations('baseline', spec({ volumes: [{ name: 'h', hostPath: { path: '/x' } }], containers: [{ name: 'a', securityContext: { capabilities: { add: ['NET_RAW'] } } }] })))).toBe(
      'non-default capabilities (container "a" must not include "NET_RAW" in securityContext.capabilities.add), hostPath volumes (volume "h")');
    expect(violations('privileged', spec({ hostNetwork: true }))).toEqual([]);
  });

  it('refuses namespaces with malformed labels (422) and enforces restricted where one is stored anyway', async () => {
    expect(await refusal(labelled('typo', { 'pod-security.kubernetes.io/enforce': 'strict' }))).toEqual({
      code: 422, message: 'Namespace "typo" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted' });
    expect((await refusal(labelled('typo', { 'pod-security.kubernetes.io/warn-version': '1.30' })))?.code).toBe(422);
    expect((await refusal(namespaces.patch({}, 'open', 'merge', { metadata: { labels: { 'pod-security.kubernetes.io/audit': 'all' } } })))?.code).toBe(422);
    // Malformed pod fields are judged as absent or wrong, never a 500.
    expect((await refusal(pods.create({ namespace: 'strict' }, pod('odd', { securityContext: 'yes', volumes: 'none' }, { securityContext: 7 }))))?.code).toBe(403);
  });
});
