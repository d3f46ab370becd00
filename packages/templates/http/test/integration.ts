import type { Server } from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start } from '@func/runtime';
import { handle } from '../src/index.js';

// The real server on a free port: the same HTTP path a deployed function serves.
let server: Server;
beforeAll(async () => {
  server = await start(handle, { port: 0 });
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('handle (integration)', () => {
  it('answers GET with a text greeting', async () => {
    const res = await request(server).get('/?name=Ada').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('Hello, Ada!\nYou sent GET /.\n');
  });

  it('echoes a JSON body', async () => {
    const res = await request(server).post('/orders').send({ item: 'tea' }).expect(200);
    expect(res.text).toContain('Body: {"item":"tea"}');
  });

  it('answers malformed JSON with a problem-details 400', async () => {
    const res = await request(server)
      .post('/')
      .set('content-type', 'application/json')
      .send('{"item":')
      .expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('serves the health endpoints listed in func.yaml', async () => {
    await request(server).get('/health/liveness').expect(200);
    await request(server).get('/health/readiness').expect(200);
  });
});
