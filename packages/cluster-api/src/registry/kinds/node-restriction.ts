/**
 * The NodeRestriction admission plugin's checks the Node authorizer cannot make (a create names its
 * object only in the body): a node (`system:node:<name>` in `system:nodes`) may create only its own
 * Node and only its own Lease in `kube-node-lease`. Anyone else passes untouched.
 */
import type { KubeObject } from '../../api/meta.js';
import { forbidden } from '../../api/errors.js';
import type { Hooks } from '../definition.js';
import type { RequestContext } from '../rest.js';

const NodePrefix = 'system:node:';

/** The node a request comes from, or undefined for every other user. */
const nodeOf = (ctx: RequestContext): string | undefined => {
  const user = ctx.user;
  return user && user.groups.includes('system:nodes') && user.name.startsWith(NodePrefix) ? user.name.slice(NodePrefix.length) : undefined;
};

/** An admit hook refusing a node's write of an object of `resource` not named after it, with NodeRestriction's reason. */
const ownObjectOnly = (group: string, resource: string, why: (node: string, name: string) => string): NonNullable<Hooks['admit']> =>
  async (obj: KubeObject, _old, ctx) => {
    const node = nodeOf(ctx);
    const name = obj.metadata?.name ?? '';
    if (node !== undefined && name !== node) throw forbidden({ group, resource }, name, why(node, name));
  };

export const ownNodeOnly = ownObjectOnly('', 'nodes', (node, name) => `node "${node}" is not allowed to modify node "${name}"`);
export const ownLeaseOnly = ownObjectOnly('coordination.k8s.io', 'leases', () => 'can only access node lease with the same name as the requesting node');
