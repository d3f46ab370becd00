import { describe, expect, it } from 'vitest';
import { MemoryStorage } from './memory/memory.js';
import { measureStorage, sampleValue } from '../../testing/src/storage-speed.js';

describe('measureStorage', () => {
  it('writes, reads and lists n values of the requested size and reports rates', async () => {
    const storage = new MemoryStorage();
    const speed = await measureStorage(storage, { n: 120, pageSize: 50, listRounds: 1, prefix: '/registry/speed/x/' });
    expect(speed).toMatchObject({ n: 120, valueBytes: 2048, pageSize: 50 });
    for (const v of [speed.createsPerSec, speed.getsPerSec, speed.listAllMs, speed.listPagedMs]) {
      expect(Number.isFinite(v) && v > 0).toBe(true);
    }
    const listed = await storage.list({ prefix: '/registry/speed/x/' });
    expect(listed.items).toHaveLength(120);
    expect(listed.items.every((kv) => kv.value.length === 2048)).toBe(true);
    await storage.close();
  });

  it('sampleValue is a JSON document of exactly the requested size', () => {
    const v = sampleValue('pod-1', 2048);
    expect(v.length).toBe(2048);
    expect(JSON.parse(new TextDecoder().decode(v))).toMatchObject({ kind: 'Pod', metadata: { name: 'pod-1' } });
  });
});
