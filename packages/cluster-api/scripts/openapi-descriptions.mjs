#!/usr/bin/env node
/**
 * Kubernetes' own documentation of the types /openapi/v3 describes, for `kubectl explain`.
 *
 * The .proto files carry field numbers and types but no comments. The `kubernetes-types` package is
 * generated from Kubernetes' OpenAPI document and keeps each type's and field's description as a doc
 * comment, and marks the fields that document requires as non-optional; this reads them with the
 * TypeScript parser and keeps the types the .proto files define, keyed by OpenAPI schema name.
 *
 * The output, src/http/openapi-descriptions.json, is committed (the package ships it and reads it at
 * run time; no dev dependency is needed to serve). test/openapi-descriptions.test.ts regenerates it in
 * memory and fails when the committed file is stale.
 *
 * Reads the built package (dist/): `npm run build` first. Usage: node scripts/openapi-descriptions.mjs
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import ts from 'typescript';
import { schemaName } from '../dist/http/openapi.js';
import { loadSchema } from '../dist/protobuf/schema.js';

export const outputFile = fileURLToPath(new URL('../src/http/openapi-descriptions.json', import.meta.url));

/** Proto package → the kubernetes-types module documenting it. OpenShift's types have no such source. */
const modules = {
  'k8s.io.api.core.v1': 'core/v1',
  'k8s.io.api.batch.v1': 'batch/v1',
  'k8s.io.api.apps.v1': 'apps/v1',
  'k8s.io.api.coordination.v1': 'coordination/v1',
  'k8s.io.api.policy.v1': 'policy/v1',
  'k8s.io.api.networking.v1': 'networking/v1',
  'k8s.io.api.discovery.v1': 'discovery/v1',
  'k8s.io.api.scheduling.v1': 'scheduling/v1',
  'k8s.io.api.storage.v1': 'storage/v1',
  'k8s.io.api.events.v1': 'events/v1',
  'k8s.io.api.authorization.v1': 'authorization/v1',
  'k8s.io.api.authentication.v1': 'authentication/v1',
  'k8s.io.api.rbac.v1': 'rbac/v1',
  'k8s.io.api.certificates.v1': 'certificates/v1',
  'k8s.io.apimachinery.pkg.apis.meta.v1': 'meta/v1',
  'k8s.io.apimachinery.pkg.api.resource': 'api/resource',
};

const text = (node) => {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  const comment = docs.map((d) => ts.getTextOfJSDocComment(d.comment) ?? '').join('\n').trim();
  return comment || undefined;
};

/** name → {description, required, properties} of every interface and type alias of one module. */
function readModule(file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const types = new Map();
  for (const statement of source.statements) {
    if (ts.isTypeAliasDeclaration(statement)) {
      types.set(statement.name.text, { description: text(statement) });
    } else if (ts.isInterfaceDeclaration(statement)) {
      const properties = {};
      const required = [];
      for (const member of statement.members) {
        if (!ts.isPropertySignature(member) || !member.name || !ts.isIdentifier(member.name) && !ts.isStringLiteral(member.name)) continue;
        const name = member.name.text;
        const description = text(member);
        if (description) properties[name] = description;
        if (!member.questionToken) required.push(name);
      }
      types.set(statement.name.text, { description: text(statement), required, properties });
    }
  }
  return types;
}

function* messages(namespace) {
  for (const nested of namespace.nestedArray) {
    if (nested instanceof protobuf.Type) yield nested;
    if (nested instanceof protobuf.Namespace) yield* messages(nested);
  }
}

/** The descriptions of every message of the .proto files that kubernetes-types documents. */
export function generateDescriptions() {
  const typesDir = dirname(createRequire(import.meta.url).resolve('kubernetes-types/package.json'));
  const byModule = new Map();
  const out = {};
  for (const type of messages(loadSchema())) {
    const pkg = type.parent.fullName.replace(/^\./, '');
    const module = modules[pkg];
    if (!module) continue;
    if (!byModule.has(module)) byModule.set(module, readModule(join(typesDir, `${module}.d.ts`)));
    const doc = byModule.get(module).get(type.name);
    if (!doc) continue;
    const entry = {};
    if (doc.description) entry.description = doc.description;
    if (doc.required?.length) entry.required = doc.required;
    if (doc.properties && Object.keys(doc.properties).length) entry.properties = doc.properties;
    if (Object.keys(entry).length) out[schemaName(type.fullName)] = entry;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

export const serialize = (descriptions) => `${JSON.stringify(descriptions, null, 1)}\n`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(outputFile, serialize(generateDescriptions()));
  console.log(`wrote ${outputFile}`);
}
