import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogUnavailableError } from './interface.js';
import { NatsLog, parseNatsUrl } from './nats.js';
import { eventLogConformance } from './testing/conformance.js';
import { type NatsCluster, startNats } from './testing/nats-server.js';

let nats: NatsCluster;
beforeAll(async () => {
  nats = await startNats(1);
});
afterAll(() => nats?.stop());

eventLogConformance('nats (one server)', { open: () => NatsLog.connect(nats.url), shared: true });

describe('nats log', () => {
  it('reads servers and replicas from the URL, and refuses bad ones', () => {
    expect(parseNatsUrl('nats://a:1,b:2?replicas=3')).toEqual({ servers: ['nats://a:1', 'nats://b:2'], replicas: 3 });
    expect(parseNatsUrl('nats://h:4222')).toEqual({ servers: ['nats://h:4222'], replicas: 1 });
    expect(() => parseNatsUrl('nats://')).toThrow(LogUnavailableError);
    expect(() => parseNatsUrl('nats://h:1?replicas=9')).toThrow(/replicas must be 1 to 5/);
  });

  it('fails to connect with a LogUnavailableError naming the servers', async () => {
    await expect(NatsLog.connect('nats://127.0.0.1:1')).rejects.toThrow(/cannot reach NATS at nats:\/\/127\.0\.0\.1:1/);
  });
});
