/**
 * Objects of every protobuf-capable kind, from minimal to rich (most fields set), in the JSON form the
 * server stores. The codec's round-trip table runs over all of them; the HTTP tests reuse them.
 */
import { containerStatus, labelSelector, nodeSelector, podSpec, type Json } from './pod-fixtures.js';

const meta = (name: string, namespace?: string): Json => ({
  name,
  ...(namespace ? { namespace } : {}),
  uid: '6f0c1d9e-4a58-4bd1-9f77-3c1c2b0f7a10',
  resourceVersion: '42',
  generation: 3,
  creationTimestamp: '2026-11-20T23:00:00Z',
  labels: { app: 'shop', 'app.kubernetes.io/part-of': 'store' },
  annotations: { 'example.com/note': 'line one\nline two', empty: '' },
});

const richMeta = (name: string, namespace?: string): Json => ({
  ...meta(name, namespace),
  generateName: `${name}-`,
  selfLink: `/api/v1/${name}`,
  deletionTimestamp: '2026-11-21T00:00:30Z',
  deletionGracePeriodSeconds: 30,
  ownerReferences: [
    { apiVersion: 'v1', kind: 'ReplicationController', name: 'web', uid: '0a5e7e8c-0000-4000-8000-000000000001', controller: true, blockOwnerDeletion: true },
    { apiVersion: 'v1', kind: 'Namespace', name: 'shop', uid: '0a5e7e8c-0000-4000-8000-000000000002' },
  ],
  finalizers: ['kubernetes.io/pv-protection', 'example.com/cleanup'],
  managedFields: [
    {
      manager: 'kubectl',
      operation: 'Update',
      apiVersion: 'v1',
      time: '2026-11-20T23:00:01Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
    },
  ],
});

const pvcSpec = { accessModes: ['ReadWriteOnce', 'ReadOnlyMany'], selector: labelSelector, resources: { requests: { storage: '10Gi' }, limits: { storage: '20Gi' } }, volumeName: 'pv-1', storageClassName: '', volumeMode: 'Block', dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' } };

/** PersistentVolume sources (the persistent variants carry namespaced secret references). */
const pvSources: Json[] = [
  { hostPath: { path: '/mnt/data' } },
  { nfs: { server: 'nfs', path: '/x' } },
  { gcePersistentDisk: { pdName: 'pd' } },
  { awsElasticBlockStore: { volumeID: 'vol' } },
  { glusterfs: { endpoints: 'ep', path: 'p', readOnly: true, endpointsNamespace: 'storage' } },
  { rbd: { monitors: ['m'], image: 'i', secretRef: { name: 's', namespace: 'storage' } } },
  { iscsi: { targetPortal: 't', iqn: 'q', lun: 1, secretRef: { name: 's', namespace: 'storage' } } },
  { cinder: { volumeID: 'c', secretRef: { name: 's', namespace: 'storage' } } },
  { cephfs: { monitors: ['m'], secretRef: { name: 's', namespace: 'storage' } } },
  { fc: { wwids: ['w'] } },
  { flocker: { datasetUUID: 'u' } },
  { flexVolume: { driver: 'd', secretRef: { name: 's', namespace: 'storage' }, options: { a: 'b' } } },
  { azureFile: { secretName: 's', shareName: 'sh', secretNamespace: 'storage' } },
  { vsphereVolume: { volumePath: 'p' } },
  { quobyte: { registry: 'r', volume: 'v' } },
  { azureDisk: { diskName: 'd', diskURI: 'u' } },
  { photonPersistentDisk: { pdID: 'p' } },
  { portworxVolume: { volumeID: 'v' } },
  { scaleIO: { gateway: 'g', system: 's', secretRef: { name: 's', namespace: 'storage' }, volumeName: 'v' } },
  { local: { path: '/mnt/disks/ssd1', fsType: 'ext4' } },
  { storageos: { volumeName: 'v', secretRef: { kind: 'Secret', namespace: 'storage', name: 's', apiVersion: 'v1' } } },
  { csi: { driver: 'csi.example.com', volumeHandle: 'h', readOnly: true, fsType: 'ext4', volumeAttributes: { a: 'b' }, controllerPublishSecretRef: { name: 'a', namespace: 'n' }, nodeStageSecretRef: { name: 'b', namespace: 'n' }, nodePublishSecretRef: { name: 'c', namespace: 'n' }, controllerExpandSecretRef: { name: 'd', namespace: 'n' } } },
];

const persistentVolumes = pvSources.map((source, i): Json => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: meta(`pv-${i}`),
  spec: { capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', ...source },
  status: { phase: 'Available' },
}));

export const fixtures: Record<string, Json[]> = {
  Namespace: [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', generation: 0 }, spec: {}, status: { phase: '' } },
    {
      apiVersion: 'v1', kind: 'Namespace', metadata: richMeta('shop'), spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Terminating', conditions: [{ type: 'NamespaceDeletionContentFailure', status: 'False', lastTransitionTime: '2026-11-20T23:01:00Z', reason: 'ContentDeleted', message: 'All content successfully deleted' }] },
    },
  ],
  ServiceAccount: [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('default', 'shop') },
    {
      apiVersion: 'v1', kind: 'ServiceAccount', metadata: richMeta('builder', 'shop'),
      secrets: [{ name: 'builder-token-x1', kind: 'Secret', namespace: 'shop', uid: 'u', apiVersion: 'v1', resourceVersion: '7', fieldPath: 'data' }],
      imagePullSecrets: [{ name: 'registry' }, { name: '' }],
      automountServiceAccountToken: false,
    },
  ],
  LimitRange: [
    {
      apiVersion: 'v1', kind: 'LimitRange', metadata: meta('limits', 'shop'),
      spec: { limits: [
        { type: 'Container', max: { cpu: '2', memory: '1Gi' }, min: { cpu: '10m' }, default: { cpu: '500m' }, defaultRequest: { cpu: '100m' }, maxLimitRequestRatio: { cpu: '10' } },
        { type: 'PersistentVolumeClaim', max: { storage: '10Gi' } },
      ] },
    },
  ],
  ResourceQuota: [
    {
      apiVersion: 'v1', kind: 'ResourceQuota', metadata: meta('quota', 'shop'),
      spec: { hard: { pods: '10', 'requests.cpu': '4', 'limits.memory': '8Gi' }, scopes: ['NotTerminating'], scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } },
      status: { hard: { pods: '10' }, used: { pods: '3' } },
    },
  ],
  Secret: [
    { apiVersion: 'v1', kind: 'Secret', metadata: meta('empty', 'shop'), type: 'Opaque' },
    {
      apiVersion: 'v1', kind: 'Secret', metadata: richMeta('creds', 'shop'), immutable: true,
      data: { password: Buffer.from('s3cr3t').toString('base64'), binary: Buffer.from([0, 255, 128, 10]).toString('base64'), empty: '' },
      type: 'kubernetes.io/basic-auth',
    },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'plain', namespace: 'shop' }, stringData: { user: 'admin', note: 'ünïcødé ✓' }, type: 'Opaque' },
  ],
  PersistentVolumeClaim: [
    {
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('data', 'shop'), spec: pvcSpec,
      status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '10Gi' }, conditions: [{ type: 'Resizing', status: 'True', lastProbeTime: '2026-11-20T23:02:00Z', lastTransitionTime: '2026-11-20T23:02:00Z', reason: 'ResizeStarted', message: 'resizing' }] },
    },
  ],
  PersistentVolume: [
    ...persistentVolumes,
    {
      apiVersion: 'v1', kind: 'PersistentVolume', metadata: richMeta('pv-rich'),
      spec: {
        capacity: { storage: '100Gi' }, nfs: { server: 'nfs.example.com', path: '/exports/shop', readOnly: true }, accessModes: ['ReadWriteMany'],
        claimRef: { kind: 'PersistentVolumeClaim', namespace: 'shop', name: 'data', uid: 'c1', apiVersion: 'v1', resourceVersion: '12' },
        persistentVolumeReclaimPolicy: 'Recycle', storageClassName: 'slow', mountOptions: ['hard', 'nfsvers=4.1'], volumeMode: 'Filesystem',
        nodeAffinity: { required: nodeSelector },
      },
      status: { phase: 'Released', message: 'claim deleted', reason: 'Released' },
    },
  ],
  Service: [
    { apiVersion: 'v1', kind: 'Service', metadata: meta('web', 'shop'), spec: { ports: [{ port: 80 }], selector: { app: 'web' }, clusterIP: '10.96.0.10', type: 'ClusterIP' } },
    {
      apiVersion: 'v1', kind: 'Service', metadata: richMeta('lb', 'shop'),
      spec: {
        ports: [
          { name: 'http', protocol: 'TCP', appProtocol: 'http', port: 80, targetPort: 8080, nodePort: 30080 },
          { name: 'https', protocol: 'TCP', port: 443, targetPort: 'https', nodePort: 30443 },
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: 'dns' },
        ],
        selector: { app: 'web' }, clusterIP: '10.96.0.11', clusterIPs: ['10.96.0.11', 'fd00::11'], type: 'LoadBalancer', externalIPs: ['192.0.2.1'],
        sessionAffinity: 'ClientIP', loadBalancerIP: '192.0.2.10', loadBalancerSourceRanges: ['0.0.0.0/0'], externalTrafficPolicy: 'Local',
        healthCheckNodePort: 32000, publishNotReadyAddresses: true, sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        topologyKeys: ['*'], ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'PreferDualStack', allocateLoadBalancerNodePorts: true,
        loadBalancerClass: 'example.com/lb', internalTrafficPolicy: 'Cluster',
      },
      status: {
        loadBalancer: { ingress: [{ ip: '192.0.2.10', ports: [{ port: 80, protocol: 'TCP' }, { port: 443, protocol: 'TCP', error: 'Pending' }] }, { hostname: 'lb.example.com' }] },
        conditions: [{ type: 'Ready', status: 'True', observedGeneration: 3, lastTransitionTime: '2026-11-20T23:03:00Z', reason: 'Provisioned', message: '' }],
      },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: meta('external', 'shop'), spec: { type: 'ExternalName', externalName: 'db.example.com' }, status: { loadBalancer: {} } },
  ],
  SecurityContextConstraints: [
    { apiVersion: 'v1', kind: 'SecurityContextConstraints', metadata: meta('restricted'), runAsUser: { type: 'MustRunAsRange' }, seLinuxContext: { type: 'MustRunAs' } },
    {
      apiVersion: 'v1', kind: 'SecurityContextConstraints', metadata: richMeta('privileged'),
      priority: 10, allowPrivilegedContainer: true, defaultAddCapabilities: ['CHOWN'], requiredDropCapabilities: ['KILL', 'MKNOD'], allowedCapabilities: ['*'],
      allowHostDirVolumePlugin: true, volumes: ['*'], allowedFlexVolumes: [{ driver: 'example/lvm' }], allowHostNetwork: true, allowHostPorts: true,
      allowHostPID: true, allowHostIPC: true, defaultAllowPrivilegeEscalation: true, allowPrivilegeEscalation: true,
      seLinuxContext: { type: 'MustRunAs', seLinuxOptions: { user: 'u', role: 'r', type: 't', level: 's0' } },
      runAsUser: { type: 'MustRunAs', uid: 1000, uidRangeMin: 1000, uidRangeMax: 2000 },
      supplementalGroups: { type: 'MustRunAs', ranges: [{ min: 1000, max: 2000 }] }, fsGroup: { type: 'MustRunAs', ranges: [{ min: 0, max: 65535 }] },
      readOnlyRootFilesystem: false, users: ['system:admin'], groups: ['system:cluster-admins'], seccompProfiles: ['*'],
      allowedUnsafeSysctls: ['kernel.msg*'], forbiddenSysctls: ['kernel.shm_rmid_forced'],
    },
  ],
  PodTemplate: [
    { apiVersion: 'v1', kind: 'PodTemplate', metadata: meta('tpl', 'shop'), template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
    { apiVersion: 'v1', kind: 'PodTemplate', metadata: richMeta('tpl-rich', 'shop'), template: { metadata: meta('tpl-pod'), spec: podSpec() } },
  ],
  ReplicationController: [
    { apiVersion: 'v1', kind: 'ReplicationController', metadata: meta('scaled-to-zero', 'shop'), spec: { replicas: 0, selector: { app: 'web' }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } }, status: { replicas: 0 } },
    {
      apiVersion: 'v1', kind: 'ReplicationController', metadata: richMeta('web', 'shop'),
      spec: { replicas: 3, minReadySeconds: 10, selector: { app: 'web' }, template: { metadata: { labels: { app: 'web' } }, spec: podSpec() } },
      status: { replicas: 3, fullyLabeledReplicas: 3, readyReplicas: 2, availableReplicas: 2, observedGeneration: 3, conditions: [{ type: 'ReplicaFailure', status: 'False', lastTransitionTime: '2026-11-20T23:04:00Z', reason: 'Ok', message: 'fine' }] },
    },
  ],
  Pod: [
    { apiVersion: 'v1', kind: 'Pod', metadata: meta('minimal', 'shop'), spec: { containers: [{ name: 'web', image: 'nginx' }] }, status: { phase: 'Pending' } },
    {
      apiVersion: 'v1', kind: 'Pod', metadata: richMeta('web-0', 'shop'), spec: podSpec(),
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True', lastProbeTime: '2026-11-20T23:00:10Z', lastTransitionTime: '2026-11-20T23:00:06Z' }, { type: 'PodScheduled', status: 'True', reason: 'Scheduled', message: 'ok' }],
        message: 'running', reason: 'Started', nominatedNodeName: 'node-2', hostIP: '10.0.0.7', podIP: '10.244.0.5', podIPs: [{ ip: '10.244.0.5' }, { ip: 'fd00::5' }],
        startTime: '2026-11-20T23:00:02Z',
        initContainerStatuses: [{ name: 'init', state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: '2026-11-20T23:00:03Z', finishedAt: '2026-11-20T23:00:04Z' } }, lastState: {}, ready: true, restartCount: 0, image: 'busybox', imageID: '' }],
        containerStatuses: [containerStatus('web'), { name: 'sidecar', state: { waiting: { reason: 'ContainerCreating', message: 'pulling' } }, lastState: {}, ready: false, restartCount: 0, image: 'envoy:1', imageID: '', started: false }],
        qosClass: 'Burstable',
        ephemeralContainerStatuses: [{ name: 'debug', state: {}, lastState: {}, ready: false, restartCount: 0, image: 'busybox', imageID: '' }],
      },
    },
  ],
  ComponentStatus: [
    { apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name: 'storage', selfLink: '/api/v1/componentstatuses/storage' }, conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }] },
    { apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name: 'etcd-0' }, conditions: [{ type: 'Healthy', status: 'False', message: '', error: 'connection refused' }] },
  ],
  Job: [
    {
      apiVersion: 'batch/v1', kind: 'Job', metadata: meta('backup', 'shop'),
      spec: {
        parallelism: 1, completions: 1, activeDeadlineSeconds: 600, backoffLimit: 0, selector: { matchLabels: { 'job-name': 'backup' } }, manualSelector: false,
        template: { metadata: { labels: { 'job-name': 'backup' } }, spec: { containers: [{ name: 'backup', image: 'busybox' }], restartPolicy: 'Never' } },
        ttlSecondsAfterFinished: 100, completionMode: 'NonIndexed', suspend: false,
      },
      status: {
        conditions: [{ type: 'Complete', status: 'True', lastProbeTime: '2026-11-20T23:05:00Z', lastTransitionTime: '2026-11-20T23:05:00Z' }],
        startTime: '2026-11-20T23:00:00Z', completionTime: '2026-11-20T23:05:00Z', active: 0, succeeded: 1, failed: 0,
        completedIndexes: '', uncountedTerminatedPods: { succeeded: ['u1'], failed: ['u2'] },
      },
    },
  ],
  Role: [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta('pod-reader', 'shop'), rules: [{ apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list'], resourceNames: ['web'] }] },
  ],
  ClusterRole: [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: meta('monitoring'),
      rules: [{ nonResourceURLs: ['/metrics', '/healthz/*'], verbs: ['get'] }, { apiGroups: ['*'], resources: ['*'], verbs: ['list', 'watch'] }],
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate': 'true' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] }] },
    },
  ],
  RoleBinding: [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: meta('devs-view', 'shop'),
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' }, { kind: 'ServiceAccount', name: 'ci', namespace: 'shop' }],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    },
  ],
  ClusterRoleBinding: [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: meta('admins'), subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }], roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' } },
  ],
  ConfigMap: [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('empty', 'shop') },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: richMeta('settings', 'shop'), data: { 'app.yaml': 'a: 1\n', empty: '' }, binaryData: { blob: 'AAEC/w==' }, immutable: true },
  ],
  Event: [
    {
      apiVersion: 'v1', kind: 'Event', metadata: meta('web.17a', 'shop'), involvedObject: { kind: 'Pod', namespace: 'shop', name: 'web', uid: 'u1', apiVersion: 'v1', resourceVersion: '7', fieldPath: 'spec.containers{web}' },
      reason: 'Pulled', message: 'Container image "nginx" already present', source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: '2026-11-20T23:00:00Z', lastTimestamp: '2026-11-20T23:01:00Z', count: 2, type: 'Normal',
    },
    {
      apiVersion: 'v1', kind: 'Event', metadata: meta('web.17b', 'shop'), involvedObject: { kind: 'Deployment', name: 'web', namespace: 'shop' }, reason: 'ScalingReplicaSet',
      message: 'Scaled up', type: 'Normal', eventTime: '2026-11-20T23:00:00.123456Z', series: { count: 3, lastObservedTime: '2026-11-20T23:02:00.000001Z' },
      action: 'Scale', related: { kind: 'ReplicaSet', name: 'web-1' }, reportingComponent: 'deployment-controller', reportingInstance: 'cm-1',
    },
    {
      apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: meta('web.17c', 'shop'), eventTime: '2026-11-20T23:00:00.123456Z',
      series: { count: 2, lastObservedTime: '2026-11-20T23:02:00.000001Z' }, reportingController: 'example.com/scaler', reportingInstance: 'scaler-1',
      action: 'Scale', reason: 'Scaled', regarding: { kind: 'Deployment', namespace: 'shop', name: 'web' }, related: { kind: 'ReplicaSet', namespace: 'shop', name: 'web-1' },
      note: 'Scaled up to 3', type: 'Normal',
    },
  ],
  Endpoints: [
    { apiVersion: 'v1', kind: 'Endpoints', metadata: meta('web', 'shop') },
    {
      apiVersion: 'v1', kind: 'Endpoints', metadata: richMeta('web', 'shop'),
      subsets: [{ addresses: [{ ip: '10.244.0.5', hostname: 'web-0', nodeName: 'node-1', targetRef: { kind: 'Pod', name: 'web-0', namespace: 'shop', uid: 'u1' } }], notReadyAddresses: [{ ip: '10.244.0.6' }], ports: [{ name: 'http', port: 80, protocol: 'TCP', appProtocol: 'http' }] }],
    },
  ],
  Node: [
    { apiVersion: 'v1', kind: 'Node', metadata: meta('node-0'), spec: {}, status: {} },
    {
      apiVersion: 'v1', kind: 'Node', metadata: richMeta('node-1'),
      spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'], providerID: 'kind://node-1', unschedulable: true, taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule', timeAdded: '2026-11-20T23:00:00Z' }] },
      status: {
        capacity: { cpu: '4', memory: '8Gi', pods: '110' }, allocatable: { cpu: '3800m', memory: '7Gi', pods: '110' }, phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2026-11-20T23:00:00Z', lastTransitionTime: '2026-11-20T22:00:00Z', reason: 'KubeletReady', message: 'kubelet is posting ready status' }],
        addresses: [{ type: 'InternalIP', address: '10.0.0.7' }, { type: 'Hostname', address: 'node-1' }], daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        nodeInfo: { machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: '6.1.0', osImage: 'Debian GNU/Linux 12 (bookworm)', containerRuntimeVersion: 'containerd://1.7.0', kubeletVersion: 'v1.32.0', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64' },
        images: [{ names: ['nginx:1.25'], sizeBytes: 70000000 }], volumesInUse: ['v1'], volumesAttached: [{ name: 'v1', devicePath: '/dev/sdb' }],
      },
    },
  ],
  Deployment: [
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta('web', 'shop'), spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } }, status: {} },
    {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: richMeta('web', 'shop'),
      spec: {
        replicas: 3, selector: labelSelector, template: { metadata: { labels: { app: 'shop' } }, spec: podSpec() },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 1 } }, minReadySeconds: 5, revisionHistoryLimit: 10, paused: false, progressDeadlineSeconds: 600,
      },
      status: {
        observedGeneration: 3, replicas: 3, updatedReplicas: 3, readyReplicas: 2, availableReplicas: 2, unavailableReplicas: 1, collisionCount: 0,
        conditions: [{ type: 'Available', status: 'False', lastUpdateTime: '2026-11-20T23:00:00Z', lastTransitionTime: '2026-11-20T23:00:00Z', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' }],
      },
    },
  ],
  StatefulSet: [
    {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta('db', 'shop'),
      spec: {
        replicas: 2, selector: { matchLabels: { app: 'db' } }, serviceName: 'db', podManagementPolicy: 'OrderedReady', revisionHistoryLimit: 10,
        template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'postgres' }] } },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' }, ordinals: { start: 1 },
      },
      status: { replicas: 2, readyReplicas: 1, currentReplicas: 2, updatedReplicas: 2, currentRevision: 'db-1', updateRevision: 'db-1', availableReplicas: 1, observedGeneration: 1 },
    },
  ],
  ControllerRevision: [{ apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: meta('db-1', 'shop'), data: { spec: { template: { metadata: { labels: { app: 'db' } } } } }, revision: 1 }],
  CronJob: [
    {
      apiVersion: 'batch/v1', kind: 'CronJob', metadata: meta('nightly', 'shop'),
      spec: { schedule: '0 3 * * *', timeZone: 'Europe/Berlin', concurrencyPolicy: 'Forbid', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1, startingDeadlineSeconds: 60,
        jobTemplate: { metadata: { labels: { app: 'nightly' } }, spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }], restartPolicy: 'OnFailure' } } } } },
      status: { active: [{ kind: 'Job', name: 'nightly-1', namespace: 'shop' }], lastScheduleTime: '2026-11-20T03:00:00Z' },
    },
  ],
  Lease: [
    { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: meta('leader', 'kube-system'), spec: { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: '2026-11-20T23:00:00.000000Z', renewTime: '2026-11-20T23:00:10.123456Z', leaseTransitions: 2 } },
  ],
  PodDisruptionBudget: [
    {
      apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: meta('web', 'shop'), spec: { minAvailable: '50%', selector: { matchLabels: { app: 'web' } }, unhealthyPodEvictionPolicy: 'IfHealthyBudget' },
      status: { observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, disruptedPods: { 'web-0': '2026-11-20T23:00:00Z' }, conditions: [{ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '', lastTransitionTime: '2026-11-20T23:00:00Z', observedGeneration: 1 }] },
    },
  ],
  Ingress: [
    {
      apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: meta('web', 'shop'),
      spec: {
        ingressClassName: 'nginx', defaultBackend: { resource: { apiGroup: 'k8s.example.com', kind: 'Bucket', name: 'static' } }, tls: [{ hosts: ['shop.example.com'], secretName: 'tls' }],
        rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }, { path: '/api', pathType: 'Exact', backend: { service: { name: 'api', port: { name: 'http' } } } }] } }, { host: '*.example.com' }],
      },
      status: { loadBalancer: { ingress: [{ ip: '192.0.2.10', ports: [{ port: 443, protocol: 'TCP', error: 'Pending' }] }, { hostname: 'lb.example.com' }] } },
    },
  ],
  IngressClass: [{ apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: meta('nginx'), spec: { controller: 'example.com/ingress', parameters: { apiGroup: 'example.com', kind: 'Params', name: 'p', scope: 'Namespace', namespace: 'shop' } } }],
  NetworkPolicy: [
    {
      apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: meta('deny', 'shop'),
      spec: {
        podSelector: { matchLabels: { app: 'db' } }, policyTypes: ['Ingress', 'Egress'],
        ingress: [{ from: [{ podSelector: { matchLabels: { app: 'web' } }, namespaceSelector: {} }, { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }], ports: [{ protocol: 'TCP', port: 5432 }, { port: 'metrics' }] }],
        egress: [{ to: [{ ipBlock: { cidr: '0.0.0.0/0' } }], ports: [{ protocol: 'UDP', port: 53, endPort: 54 }] }],
      },
    },
  ],
  EndpointSlice: [
    {
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: meta('web-abc', 'shop'), addressType: 'IPv4',
      endpoints: [{ addresses: ['10.244.0.5'], conditions: { ready: true, serving: true, terminating: false }, hostname: 'web-0', targetRef: { kind: 'Pod', name: 'web-0', namespace: 'shop' }, nodeName: 'node-1', zone: 'a', hints: { forZones: [{ name: 'a' }] } }],
      ports: [{ name: 'http', protocol: 'TCP', port: 80, appProtocol: 'http' }],
    },
  ],
  PriorityClass: [{ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: meta('high'), value: 1000, globalDefault: false, description: 'important', preemptionPolicy: 'Never' }],
  StorageClass: [
    {
      apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: meta('fast'), provisioner: 'example.com/disk', parameters: { type: 'ssd' }, reclaimPolicy: 'Retain', mountOptions: ['noatime'],
      allowVolumeExpansion: true, volumeBindingMode: 'WaitForFirstConsumer', allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['a', 'b'] }] }],
    },
  ],
  CertificateSigningRequest: [
    {
      apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: meta('node-csr-a'),
      spec: {
        request: Buffer.from('-----BEGIN CERTIFICATE REQUEST-----\n').toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', expirationSeconds: 3600,
        usages: ['digital signature', 'client auth'], username: 'system:bootstrap:abcdef', uid: 'u', groups: ['system:bootstrappers', 'system:authenticated'], extra: { 'scopes.example.com': ['a', 'b'] },
      },
      status: {
        conditions: [{ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'Auto approving kubelet client certificate after SubjectAccessReview.', lastUpdateTime: '2026-11-20T23:01:00Z', lastTransitionTime: '2026-11-20T23:01:00Z' }],
        certificate: Buffer.from('-----BEGIN CERTIFICATE-----\n').toString('base64'),
      },
    },
  ],
  HorizontalPodAutoscaler: [
    {
      apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta('web', 'shop'),
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3 },
    },
    {
      apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: richMeta('api', 'shop'),
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' }, minReplicas: 2, maxReplicas: 10,
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
          { type: 'Pods', pods: { metric: { name: 'rps', selector: { matchLabels: { app: 'api' } } }, target: { type: 'AverageValue', averageValue: '100m' } } },
          { type: 'Object', object: { describedObject: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'api' }, metric: { name: 'hits' }, target: { type: 'Value', value: '2k' } } },
          { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'AverageValue', averageValue: '30' } } },
          { type: 'ContainerResource', containerResource: { name: 'memory', container: 'app', target: { type: 'AverageValue', averageValue: '512Mi' } } },
        ],
        behavior: { scaleDown: { stabilizationWindowSeconds: 300, selectPolicy: 'Min', policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }] }, scaleUp: { stabilizationWindowSeconds: 0 } },
      },
      status: {
        observedGeneration: 3, lastScaleTime: '2026-11-20T03:00:00Z', currentReplicas: 2, desiredReplicas: 4,
        currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 95, averageValue: '950m' } } }],
        conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2026-11-20T03:00:00Z', reason: 'SucceededRescale', message: 'ok' }],
      },
    },
    {
      apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: meta('web', 'shop'),
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 80 },
      status: { currentReplicas: 1, desiredReplicas: 1, currentCPUUtilizationPercentage: 12, lastScaleTime: '2026-11-20T03:00:00Z', observedGeneration: 1 },
    },
  ],
  ReplicaSet: [
    {
      apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: meta('web-1', 'shop'),
      spec: { replicas: 2, minReadySeconds: 5, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
      status: { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 1, availableReplicas: 1, observedGeneration: 1 },
    },
  ],
  DaemonSet: [
    {
      apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: meta('agent', 'shop'),
      spec: {
        selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'agent', image: 'busybox' }] } },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: '25%' } }, revisionHistoryLimit: 5,
      },
      status: { currentNumberScheduled: 1, numberMisscheduled: 0, desiredNumberScheduled: 1, numberReady: 1, observedGeneration: 1, updatedNumberScheduled: 1, numberAvailable: 1 },
    },
  ],
  SubjectAccessReview: [
    {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {},
      spec: { resourceAttributes: { namespace: 'shop', verb: 'get', resource: 'pods', name: 'web' }, user: 'alice', groups: ['devs'], extra: { scopes: ['read'] }, uid: 'u1' },
      status: { allowed: true, reason: 'bound' },
    },
  ],
  LocalSubjectAccessReview: [
    { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: 'shop' }, spec: { resourceAttributes: { namespace: 'shop', verb: 'list', resource: 'secrets' }, user: 'bob' } },
  ],
  SelfSubjectAccessReview: [
    { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', metadata: {}, spec: { nonResourceAttributes: { path: '/metrics', verb: 'get' } }, status: { allowed: false, denied: true, evaluationError: '' } },
  ],
  SelfSubjectRulesReview: [
    {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', metadata: {}, spec: { namespace: 'shop' },
      status: { resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['web'] }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }], incomplete: false },
    },
  ],
  SelfSubjectReview: [{ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {}, status: { userInfo: { username: 'alice', groups: ['devs'], extra: { scopes: ['a'] } } } }],
  Scale: [{ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: meta('web', 'shop'), spec: { replicas: 3 }, status: { replicas: 2, selector: 'app=web' } }],
  TokenReview: [
    {
      apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec: { token: 'abc.def', audiences: ['api'] },
      status: { authenticated: true, user: { username: 'alice', uid: 'u1', groups: ['devs'], extra: { scopes: ['a', 'b'] } }, audiences: ['api'], error: '' },
    },
  ],
  APIService: [
    {
      apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: meta('v1beta1.metrics.k8s.io'),
      spec: { service: { namespace: 'kube-system', name: 'metrics-server', port: 443 }, group: 'metrics.k8s.io', version: 'v1beta1', insecureSkipTLSVerify: true, caBundle: 'AAEC/w==', groupPriorityMinimum: 100, versionPriority: 100 },
      status: { conditions: [{ type: 'Available', status: 'True', lastTransitionTime: '2026-11-20T03:00:00Z', reason: 'Passed', message: 'all checks passed' }] },
    },
    { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: meta('v1.apps'), spec: { group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 } },
  ],
  Status: [
    { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Success', details: { name: 'web', kind: 'pods', uid: 'u1' }, code: 200 },
    {
      apiVersion: 'v1', kind: 'Status', metadata: { resourceVersion: '9', continue: 'abc', remainingItemCount: 0, selfLink: '/x' }, status: 'Failure',
      message: 'Pod "web" is invalid: spec.containers[0].image: Required value', reason: 'Invalid',
      details: { name: 'web', group: '', kind: 'Pod', causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers[0].image' }, { reason: 'FieldValueInvalid' }], retryAfterSeconds: 5 },
      code: 422,
    },
  ],
  DeleteOptions: [
    { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: 'u1', resourceVersion: '5' }, orphanDependents: false, propagationPolicy: 'Foreground', dryRun: ['All'] },
    { apiVersion: 'meta.k8s.io/v1', kind: 'DeleteOptions', propagationPolicy: 'Background' },
  ],
};

/** Kinds that are never listed (a Status, options, subresource bodies and reviews). */
const unlisted = /^(Status|DeleteOptions|Scale|TokenReview|.*SubjectAccessReview|.*RulesReview|SelfSubjectReview)$/;

/** A list of each kind's fixtures per group version, as a list response carries them (items without apiVersion/kind). */
export const listFixtures: Json[] = Object.entries(fixtures)
  .filter(([kind]) => !unlisted.test(kind))
  .flatMap(([kind, items]) =>
    [...new Set(items.map((i) => i.apiVersion))].map((apiVersion) => ({
      apiVersion,
      kind: `${kind}List`,
      metadata: { resourceVersion: '100', continue: 'eyJydiI6MTAwfQ', remainingItemCount: 7 },
      items: items.filter((i) => i.apiVersion === apiVersion).map(({ apiVersion: _a, kind: _k, ...rest }) => rest),
    })),
  );
