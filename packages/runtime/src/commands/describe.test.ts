import { describe, expect, it } from 'vitest';
import type { Description } from '../deploy/describe.js';
import { formatDescription } from './describe.js';

const base: Description = {
  name: 'hello', namespace: 'default', kind: 'KnativeService', image: 'localhost/hello@sha256:00',
  replicas: { desired: 0, updated: 0, ready: 0, available: 0 }, pods: [], triggers: [], where: { lines: [] }, events: [],
  revisions: [{ name: 'hello-00001', percent: 100, tags: [], ready: true, image: 'localhost/hello@sha256:00' } as never],
};

describe('formatDescription: cold starts', () => {
  it('shows each revision\'s cold starts in ms (count, last, mean, p50 / p99 buckets)', () => {
    const text = formatDescription({ ...base, coldStarts: [{ revision: 'hello-00001', count: 3, last: 0.12, mean: 0.1405, p50: 0.15, p99: Infinity }] }, 0);
    expect(text).toMatch(/^Cold starts \(a request at zero pods to its answer, at the gateway\):\n {2}REVISION +COUNT +LAST +MEAN +P50 +P99\n {2}hello-00001 +3 +120 ms +141 ms +≤150 ms +>10 s$/m);
  });

  it('says nothing of cold starts when there were none', () => {
    expect(formatDescription({ ...base, coldStarts: [] }, 0)).not.toContain('Cold starts');
    expect(formatDescription(base, 0)).not.toContain('Cold starts');
  });
});
