/**
 * After a deploy, func.yaml records what was deployed, as Knative's func writes it back: `image`
 * (the name), `imageDigest` (what was built) and `deploy.namespace` (where it went, so the next
 * deploy goes there too). The file is edited, not rewritten: comments, order and the editor's
 * schema line stay as they were, and a field that already holds the value is left untouched.
 * `config`, `subscribe` edit it the same way (editFuncYaml).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { isMap, parseDocument, type Document } from 'yaml';

export interface Deployed {
  image: string;
  imageDigest: string;
  namespace: string;
}

/**
 * Applies `edit` to the file's YAML document and writes it back when the text changed; whether it
 * did. `check` sees the edited document as plain data before anything is written, and may throw.
 */
export function editFuncYaml(file: string, edit: (doc: Document) => void, check?: (data: unknown) => void): boolean {
  const before = readFileSync(file, 'utf8');
  const doc = parseDocument(before);
  edit(doc);
  const after = doc.toString();
  if (after === before) return false;
  check?.(doc.toJS());
  writeFileSync(file, after);
  return true;
}

/** Whether the file changed. */
export function recordDeployment(file: string, deployed: Deployed): boolean {
  return editFuncYaml(file, (doc) => {
    const setIfChanged = (path: string[], value: string) => {
      if (doc.getIn(path) !== value) doc.setIn(path, value);
    };
    setIfChanged(['image'], deployed.image);
    setIfChanged(['imageDigest'], deployed.imageDigest);
    if (!isMap(doc.get('deploy'))) doc.set('deploy', doc.createNode({}));
    setIfChanged(['deploy', 'namespace'], deployed.namespace);
  });
}
