import { describe, expect, it } from 'vitest';
import { invoke } from '@func/runtime/testing';
import { CloudEvent } from 'cloudevents';
import { handle, replySource, replyType, type Customer } from '../src/index.js';

function customerEvent(data: unknown): CloudEvent<unknown> {
  return new CloudEvent({ source: '/test/unit', type: 'com.example.customer.created', data });
}

describe('handle (unit)', () => {
  it('replies to a customer event with a greeting event', async () => {
    const data: Customer = { name: 'Ada', customerId: '42' };
    const res = await invoke(handle, { method: 'POST', cloudevent: customerEvent(data) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['ce-type']).toBe(replyType);
    expect(res.headers['ce-source']).toBe(replySource);
    expect(res.body).toEqual({ customerId: '42', message: 'Hello, Ada!' });
  });

  it('rejects event data that is not a customer with a 400', async () => {
    const res = await invoke(handle, { method: 'POST', cloudevent: customerEvent({ name: 7 }) });
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatchObject({ status: 400, title: 'Invalid event data' });
  });

  it('rejects a plain HTTP request with a 400', async () => {
    const res = await invoke(handle, { method: 'POST', body: { name: 'Ada', customerId: '42' } });
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatchObject({ title: 'Expected a CloudEvent' });
  });
});
