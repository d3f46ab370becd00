/**
 * The resource an `apiVersion` and `kind` name (a source's resources, a SinkBinding's subject), found
 * as discovery would: among the definitions the client serves, not by guessing a plural.
 */
import type { ApiClient, ResourceClient } from '../client/interface.js';

export const splitApiVersion = (apiVersion: string): { group: string; version: string } => {
  const at = apiVersion.indexOf('/');
  return at < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, at), version: apiVersion.slice(at + 1) };
};

export const findResource = (client: ApiClient, apiVersion = '', kind = ''): ResourceClient | undefined => {
  const { group, version } = splitApiVersion(apiVersion);
  const def = client.definitions().find((d) => d.group === group && d.version === version && d.kind === kind && !d.plural.includes('/'));
  return def && client.find(group, version, def.plural);
};
