/** The broker's public API: start one, feed it Brokers and Triggers, resolve references. */
export { startBroker, type BrokerOptions, type RunningBroker } from './broker.js';
export { StaticTriggerSource, type BrokerConfig, type TriggerSource } from './source.js';
export { functionResolver, noResolver, resolveDestination, type ResolvedRef, type SubscriberResolver } from './resolver.js';
export { brokerStatus, triggerStatus, type BrokerObservation, type Resolution, type TriggerObservation } from './status/status.js';
export { openEventLog } from './log/factory.js';
export type { Consumer, ConsumerOptions, EventLog, LogMessage } from './log/interface.js';
export { BrokerMetrics, jsonLogger, type Logger } from './metrics.js';
export type * from './types.js';
export { startClusterBroker, type ClusterBroker, type ClusterBrokerOptions } from './cluster/start.js';
export { ApiTriggerSource } from './cluster/trigger-source.js';
export { ClusterResolver } from './cluster/resolver.js';
export { parseAdvertised, type Advertised } from './cluster/advertise.js';
export { brokerClusterRole, brokerClusterRoleBinding, BROKER_CLUSTER_ROLE } from './cluster/role.js';
