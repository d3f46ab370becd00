import { describe, expect, it } from 'vitest';
import { invoke } from '@func/runtime/testing';
import { handle } from '../src/index.js';

describe('handle (unit)', () => {
  it('greets the name given in the query', async () => {
    const res = await invoke(handle, { method: 'GET', path: '/', query: { name: 'Ada' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toBe('Hello, Ada!\nYou sent GET /.\n');
  });

  it('greets the world when no name is given', async () => {
    const res = await invoke(handle, { method: 'GET', path: '/' });
    expect(res.body).toBe('Hello, world!\nYou sent GET /.\n');
  });

  it('echoes a JSON body it was sent', async () => {
    const res = await invoke(handle, {
      method: 'POST',
      path: '/orders',
      headers: { 'content-type': 'application/json' },
      body: { item: 'tea' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('Hello, world!\nYou sent POST /orders.\nBody: {"item":"tea"}\n');
  });
});
