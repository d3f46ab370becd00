/**
 * Views of an object, as the generic store writes through them: the object itself (`objectView`) and
 * the fields its view subresources own. Every update — PUT, PATCH or apply, of the object or of a
 * view subresource — is decode → merge into the stored object → the update rules, inside the one
 * guaranteed update (store.ts); only the view differs.
 */
import type { KubeObject } from '../../api/meta.js';
import { badRequest } from '../../api/errors.js';
import type { ViewBehaviour, ViewRequest } from '../subresource.js';
import { subresourceFields } from './fields.js';
import { clone } from './meta.js';
import { decodeBody, matchNamespace } from './strategy.js';

/** The body of a PUT, or the result of a PATCH, renames nothing (Kubernetes' checkName, 400). */
const checkName = (obj: KubeObject, name: string): void => {
  if (obj.metadata.name !== name) {
    throw badRequest(`the name of the object (${obj.metadata.name ?? ''}) does not match the name on the URL (${name})`);
  }
};

/** A body that is the whole object (the object itself, status, finalize): the kind's decoding, its name, its namespace. */
export const decodeObject = (body: unknown, { name, namespace, def, patched }: ViewRequest): { view: KubeObject; resourceVersion?: string } => {
  const obj = decodeBody(def, body);
  checkName(obj, name);
  if (!patched) matchNamespace(def, { namespace }, obj.metadata);
  return { view: obj, resourceVersion: obj.metadata.resourceVersion };
};

/** The object itself: what its subresources own is kept from the stored object (Kubernetes' PrepareForUpdate). */
export const objectView: ViewBehaviour = {
  type: 'view',
  decode: decodeObject,
  merge(obj, old, def) {
    for (const field of subresourceFields(def)) {
      if (old[field] === undefined) delete obj[field];
      else obj[field] = clone(old[field]);
    }
    return obj;
  },
};
