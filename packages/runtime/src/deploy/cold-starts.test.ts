import { describe, expect, it } from 'vitest';
import { coldStartsOf } from './cold-starts.js';

const text = `# TYPE activator_cold_start_seconds histogram
activator_cold_start_seconds_bucket{namespace="default",revision="hello-00001",le="0.1"} 1
activator_cold_start_seconds_bucket{namespace="default",revision="hello-00001",le="0.25"} 3
activator_cold_start_seconds_bucket{namespace="default",revision="hello-00001",le="+Inf"} 4
activator_cold_start_seconds_sum{namespace="default",revision="hello-00001"} 2.5
activator_cold_start_seconds_count{namespace="default",revision="hello-00001"} 4
activator_last_cold_start_seconds{namespace="default",revision="hello-00001"} 0.2
activator_cold_start_seconds_count{namespace="other",revision="hello-00001"} 9
activator_cold_start_seconds_count{namespace="default",revision="else-00001"} 9
`;

describe('coldStartsOf (the gateway\'s /metrics)', () => {
  it('reads count, last, mean and the p50 / p99 buckets of the named revisions in the namespace', () => {
    expect(coldStartsOf(text, 'default', ['hello-00001', 'hello-00002'])).toEqual([{ revision: 'hello-00001', count: 4, last: 0.2, mean: 0.625, p50: 0.25, p99: Infinity }]);
  });

  it('ignores what is not its text: no lines, garbage, other metrics', () => {
    expect(coldStartsOf('', 'default', ['hello-00001'])).toEqual([]);
    expect(coldStartsOf('<html>nope</html>\nactivator_cold_start_seconds_count{namespace="default",revision="hello-00001"} x\n', 'default', ['hello-00001'])).toEqual([]);
  });
});
