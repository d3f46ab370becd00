/**
 * The committed Kubernetes documentation (src/http/openapi-descriptions.json) is what its generator makes
 * of the .proto files and the kubernetes-types package now.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error the generator is plain JavaScript without declarations
import { generateDescriptions, outputFile, serialize } from '../../scripts/openapi-descriptions.mjs';

describe('openapi-descriptions.json', () => {
  it('is generated from the current .proto files (run `npm run generate -w @func/cluster-api` when this fails)', () => {
    const fresh = (serialize as (d: unknown) => string)((generateDescriptions as () => unknown)());
    expect(readFileSync(outputFile as string, 'utf8')).toBe(fresh);
  });

  it('documents every kind of the core group the spec serves, with the fields it requires', () => {
    const docs = JSON.parse(readFileSync(outputFile as string, 'utf8'));
    for (const kind of ['Pod', 'Service', 'Namespace', 'Secret', 'ServiceAccount', 'PersistentVolumeClaim', 'PersistentVolume', 'ReplicationController', 'ResourceQuota', 'LimitRange', 'PodTemplate', 'ComponentStatus', 'Binding']) {
      expect(docs[`io.k8s.api.core.v1.${kind}`]?.description, kind).toMatch(/\w/);
    }
    expect(docs['io.k8s.api.core.v1.PodSpec'].required).toEqual(['containers']);
  });
});
