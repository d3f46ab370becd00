export { AdmissionChain } from './chain.js';
export { AdmissionPlugins } from './plugins.js';
export { warn, type AdmissionPlugin, type AdmissionRequest, type Operation } from './plugin.js';
