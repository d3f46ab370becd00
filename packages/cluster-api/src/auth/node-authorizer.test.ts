import { describe, expect, it } from 'vitest';
import { NodeAuthorizer, nodeOf, type NodeRequest } from './node-authorizer.js';
import { NodeGraph, podReferences } from './node-graph.js';

const graph = new NodeGraph();
graph.observe('ADDED', {
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name: 'web', namespace: 'shop' },
  spec: {
    nodeName: 'a', serviceAccountName: 'shopper', imagePullSecrets: [{ name: 'pull' }],
    volumes: [{ name: 'cfg', configMap: { name: 'settings' } }, { name: 'p', projected: { sources: [{ secret: { name: 'proj' } }] } }, { name: 'd', persistentVolumeClaim: { claimName: 'data' } }],
    containers: [{ name: 'c', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'creds', key: 'k' } } }], envFrom: [{ configMapRef: { name: 'env' } }] }],
  },
});
graph.observe('ADDED', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'other', namespace: 'shop' }, spec: { nodeName: 'b', containers: [{ name: 'c', envFrom: [{ secretRef: { name: 'b-only' } }] }] } });
const authorizer = new NodeAuthorizer(graph);

const node = (n: string) => ({ name: `system:node:${n}`, groups: ['system:nodes', 'system:authenticated'] });
const req = (verb: string, resource: string, extra: Partial<NodeRequest> = {}): NodeRequest =>
  ({ user: node('a'), verb, resourceRequest: true, apiGroup: '', resource, subresource: '', namespace: 'shop', name: '', ...extra });
const decide = (r: NodeRequest) => authorizer.authorize(r).decision;

describe('podReferences', () => {
  it('finds what kube-apiserver\'s graph would', () => {
    expect([...podReferences({ automountServiceAccountToken: false, containers: [{ envFrom: [{ secretRef: { name: 's' } }] }] })].sort()).toEqual(['secret/s', 'serviceaccount/default']);
  });

  it('finds the Secrets named by every volume source VisitPodSecretNames walks', () => {
    const volumes = [
      { name: 'a', cephfs: { monitors: ['m'], secretRef: { name: 'ceph' } } },
      { name: 'b', csi: { driver: 'd', nodePublishSecretRef: { name: 'csi' } } },
      { name: 'c', azureFile: { secretName: 'azure', shareName: 's' } },
    ];
    expect([...podReferences({ automountServiceAccountToken: false, volumes })].sort()).toEqual(['secret/azure', 'secret/ceph', 'secret/csi', 'serviceaccount/default']);
  });

  it('counts the service account volume the agent mounts unless the pod opts out', () => {
    expect([...podReferences({ serviceAccountName: 'ci', containers: [{}] })].sort()).toEqual(['configmap/kube-root-ca.crt', 'serviceaccount/ci']);
  });
});

describe('NodeAuthorizer', () => {
  it('knows nodes by name and group only', () => {
    expect(nodeOf(node('a'))).toBe('a');
    expect(nodeOf({ name: 'system:node:a', groups: [] })).toBeUndefined();
    expect(decide({ ...req('get', 'secrets', { name: 'creds' }), user: { name: 'alice', groups: ['system:nodes'] } })).toBe('NoOpinion');
  });

  it.each([
    ['get', 'secrets', 'creds'], ['get', 'secrets', 'pull'], ['get', 'secrets', 'proj'], ['watch', 'configmaps', 'settings'], ['list', 'configmaps', 'env'], ['get', 'persistentvolumeclaims', 'data'],
  ])('lets a node %s %s/%s its pods reference', (verb, resource, name) => expect(decide(req(verb, resource, { name }))).toBe('Allow'));

  it.each([
    ['get', 'secrets', 'b-only', "no relationship found between node 'a' and this object"],
    ['list', 'secrets', '', 'No Object name found, key not found'],
    ['update', 'configmaps', 'settings', 'can only read resources of this type'],
  ])('refuses %s %s/%s', (verb, resource, name, reason) => expect(authorizer.authorize(req(verb, resource, { name }))).toEqual({ decision: 'NoOpinion', reason }));

  it('allows tokens for its pods\' service accounts only', () => {
    expect(decide(req('create', 'serviceaccounts', { subresource: 'token', name: 'shopper' }))).toBe('Allow');
    expect(decide(req('create', 'serviceaccounts', { subresource: 'token', name: 'default' }))).toBe('NoOpinion');
  });

  it('writes the status of, evicts and deletes its own pods only; creates pods for NodeRestriction to judge', () => {
    expect(decide(req('patch', 'pods', { subresource: 'status', name: 'web' }))).toBe('Allow');
    expect(decide(req('delete', 'pods', { name: 'web' }))).toBe('Allow');
    expect(decide(req('create', 'pods', { subresource: 'eviction', name: 'web' }))).toBe('Allow');
    expect(decide(req('patch', 'pods', { subresource: 'status', name: 'other' }))).toBe('NoOpinion');
    expect(decide(req('delete', 'pods', { name: 'other' }))).toBe('NoOpinion');
    expect(authorizer.authorize(req('delete', 'pods', { name: 'other' })).reason).toBe('node "a" can only delete pods with spec.nodeName set to itself');
    expect(authorizer.authorize(req('create', 'pods', { subresource: 'eviction', name: 'other' })).reason).toBe('node a can only evict pods with spec.nodeName set to itself');
    expect(authorizer.authorize(req('update', 'pods', { subresource: 'status', name: 'other' })).reason).toBe('node "a" can only update pod status for pods with spec.nodeName set to itself');
    // A pod the graph does not know (gone, or not seen yet): NodeRestriction decides from the stored pod.
    expect(decide(req('delete', 'pods', { name: 'gone' }))).toBe('Allow');
    expect(decide(req('patch', 'pods', { subresource: 'status', name: 'gone' }))).toBe('Allow');
    expect(decide(req('create', 'pods', { subresource: 'eviction', name: 'gone' }))).toBe('Allow');
    expect(decide(req('create', 'pods', {}))).toBe('Allow');
    expect(decide(req('create', 'pods', { subresource: 'binding', name: 'web' }))).toBe('NoOpinion');
    expect(decide(req('update', 'pods', { name: 'web' }))).toBe('NoOpinion');
    expect(decide(req('watch', 'pods', { namespace: '' }))).toBe('Allow');
  });

  it('changes its own Node and Lease only', () => {
    expect(decide(req('create', 'nodes', { namespace: '', name: 'a' }))).toBe('Allow');
    expect(decide(req('patch', 'nodes', { namespace: '', subresource: 'status', name: 'a' }))).toBe('Allow');
    expect(decide(req('patch', 'nodes', { namespace: '', subresource: 'status', name: 'b' }))).toBe('NoOpinion');
    expect(decide(req('delete', 'nodes', { namespace: '', name: 'a' }))).toBe('NoOpinion');
    expect(decide(req('update', 'leases', { apiGroup: 'coordination.k8s.io', namespace: 'kube-node-lease', name: 'a' }))).toBe('Allow');
    expect(decide(req('update', 'leases', { apiGroup: 'coordination.k8s.io', namespace: 'kube-node-lease', name: 'b' }))).toBe('NoOpinion');
    expect(decide(req('get', 'leases', { apiGroup: 'coordination.k8s.io', namespace: 'kube-system', name: 'a' }))).toBe('NoOpinion');
    // A create names no object (the name is in the body): allowed in kube-node-lease only, as kube's authorizer does.
    expect(decide(req('create', 'leases', { apiGroup: 'coordination.k8s.io', namespace: 'kube-node-lease' }))).toBe('Allow');
    expect(decide(req('create', 'leases', { apiGroup: 'coordination.k8s.io', namespace: 'default' }))).toBe('NoOpinion');
    expect(decide(req('list', 'leases', { apiGroup: 'coordination.k8s.io', namespace: 'kube-node-lease' }))).toBe('NoOpinion');
  });

  it('writes events and asks the reviews its kubelet server needs', () => {
    expect(decide(req('create', 'events'))).toBe('Allow');
    expect(decide(req('create', 'subjectaccessreviews', { apiGroup: 'authorization.k8s.io', namespace: '' }))).toBe('Allow');
    expect(decide(req('create', 'tokenreviews', { apiGroup: 'authentication.k8s.io', namespace: '' }))).toBe('Allow');
    expect(decide(req('delete', 'namespaces', { namespace: '', name: 'shop' }))).toBe('NoOpinion');
  });

  it('keeps an edge while any pod of the node makes it, and drops what a changed pod no longer references', () => {
    const g = new NodeGraph();
    const pod = (name: string, secret: string, nodeName = 'a') => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, spec: { nodeName, containers: [{ name: 'c', envFrom: [{ secretRef: { name: secret } }] }] } });
    g.observe('ADDED', pod('p1', 'shared'));
    g.observe('ADDED', pod('p2', 'shared'));
    expect(g.relates('a', 'secret', 'ns', 'shared')).toBe(true);
    expect(g.relates('a', 'secret', 'other', 'shared')).toBe(false);
    expect(g.relates('b', 'secret', 'ns', 'shared')).toBe(false);
    g.observe('DELETED', pod('p1', 'shared'));
    expect(g.relates('a', 'secret', 'ns', 'shared')).toBe(true);
    g.observe('MODIFIED', pod('p2', 'replaced'));
    expect(g.relates('a', 'secret', 'ns', 'shared')).toBe(false);
    expect(g.relates('a', 'secret', 'ns', 'replaced')).toBe(true);
    g.observe('MODIFIED', pod('p2', 'replaced', 'b'));
    expect([g.relates('a', 'secret', 'ns', 'replaced'), g.relates('b', 'secret', 'ns', 'replaced')]).toEqual([false, true]);
    g.observe('MODIFIED', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p2', namespace: 'ns' }, spec: { containers: [] } });
    expect(g.relates('b', 'secret', 'ns', 'replaced')).toBe(false);
    expect(g.podNode('ns', 'p2')).toBeUndefined();
  });

  it('forgets pods that leave the node', () => {
    graph.observe('DELETED', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'shop' }, spec: {} });
    expect(decide(req('get', 'secrets', { name: 'creds' }))).toBe('NoOpinion');
  });
});
