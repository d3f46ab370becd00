/** Public API of @func/cluster-api. */
export type * from './api/meta.js';
export type * from './registry/definition.js';
export type * from './registry/rest.js';
export type * from './registry/subresource.js';
export type * from './storage/interface.js';
export { ApiError, isApiError, StatusReasons, type StatusReason } from './api/errors.js';
export { createRegistry } from './registry/index.js';
export { openStorage } from './storage/factory.js';
export { ConfigError, resolveBrokerConfig, resolveConfig, type BrokerRoleConfig, type ServeConfig } from './config.js';
export { startClusterBroker, type ClusterBroker, type ClusterBrokerOptions } from './broker/cluster/start.js';
export { brokerClusterRole, brokerClusterRoleBinding } from './broker/cluster/role.js';
export { serve, startServer, type ClusterApiServer, type Served, type StartOptions } from './server.js';
export { createApp, type AppOptions, type RequestHandler } from './http/app.js';
export { loadTokenFile, parseTokenFile, tokenAuthenticator, type Authenticator } from './auth/authenticator.js';
