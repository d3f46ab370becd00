import type { Server } from 'node:http';
import request from 'supertest';
import { CloudEvent, HTTP } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start } from '@func/runtime';
import { handle, replySource, replyType, type Customer } from '../src/index.js';

// The real server on a free port: the same HTTP path a broker delivers events over.
let server: Server;
beforeAll(async () => {
  server = await start(handle, { port: 0 });
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function binaryEvent(data: unknown) {
  return HTTP.binary(new CloudEvent({ source: '/test/integration', type: 'com.example.customer.created', data }));
}

describe('handle (integration)', () => {
  it('answers a binary-mode CloudEvent with a binary-mode CloudEvent', async () => {
    const data: Customer = { name: 'Ada', customerId: '42' };
    const message = binaryEvent(data);
    const res = await request(server).post('/').set(message.headers).send(message.body as string).expect(200);
    expect(res.headers['ce-type']).toBe(replyType);
    expect(res.headers['ce-source']).toBe(replySource);
    expect(res.headers['ce-specversion']).toBe('1.0');
    expect(res.headers['ce-id']).toBeTruthy();
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ customerId: '42', message: 'Hello, Ada!' });
  });

  it('answers an event with invalid data with a 400 problem', async () => {
    const message = binaryEvent({ customerId: 42 });
    const res = await request(server).post('/').set(message.headers).send(message.body as string).expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('answers a request that is not an event with a 400', async () => {
    await request(server).post('/').send({ name: 'Ada', customerId: '42' }).expect(400);
  });
});
