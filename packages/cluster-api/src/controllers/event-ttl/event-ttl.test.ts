import { afterEach, describe, expect, it } from 'vitest';
import { isApiError } from '../../api/errors.js';
import { createRegistry } from '../../registry/index.js';
import { MemoryStorage } from '../../storage/memory/memory.js';
import { startEventTtl } from './event-ttl.js';
import type { Controller } from '../shared.js';

const ago = (ms: number) => new Date(Date.now() - ms).toISOString().replace(/\.\d+Z$/, 'Z');
const event = (name: string, lastTimestamp: string) => ({
  apiVersion: 'v1', kind: 'Event', metadata: { name }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'Seen', type: 'Normal', lastTimestamp,
});

describe('the Event TTL (kube-apiserver --event-ttl)', () => {
  let controller: Controller | undefined;
  afterEach(() => controller?.stop());

  it('removes an Event whose last occurrence is older than the TTL, and keeps a recent one', async () => {
    const registry = createRegistry(new MemoryStorage());
    await registry.find('', 'v1', 'namespaces')!.create({}, { metadata: { name: 'default' } });
    const events = registry.find('', 'v1', 'events')!;
    const ctx = { namespace: 'default' };
    await events.create(ctx, event('old', ago(2 * 60_000)));
    await events.create(ctx, event('new', ago(0)));
    controller = startEventTtl(registry, { eventTtlMs: 60_000 });
    const gone = async () => events.get(ctx, 'old').then(() => false, (e: unknown) => isApiError(e) && e.code === 404);
    for (let i = 0; i < 200 && !(await gone()); i++) await new Promise((r) => setTimeout(r, 25));
    expect(await gone()).toBe(true);
    expect((await events.get(ctx, 'new')).metadata.name).toBe('new');
    const renewed = await events.patch(ctx, 'new', 'merge', { lastTimestamp: ago(0), count: 2 });
    expect(renewed.object.count).toBe(2);
  });
});
