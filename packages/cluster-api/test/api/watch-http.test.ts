/** Watch stream framing over real HTTP: headers at once, one JSON event per line, timeouts, all forms. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Backends, namespace, openWatch, pod, startTestServer, type TestServer } from '../support/helpers.js';

describe.each(Backends)('watch over HTTP on %s storage', (backend) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer(backend);
    await s.request('POST', '/api/v1/namespaces', { body: namespace('w') });
  });
  afterAll(() => s.close());

  it('sends headers before any event, then one event per line as it happens', async () => {
    const list = await s.request('GET', '/api/v1/namespaces/w/pods');
    const rv = list.json.metadata.resourceVersion;
    const w = await openWatch(s, `/api/v1/namespaces/w/pods?watch=true&resourceVersion=${rv}`);
    expect(w.res.status).toBe(200);
    expect(w.res.headers.get('content-type')).toBe('application/json;stream=watch');
    await s.request('POST', '/api/v1/namespaces/w/pods', { body: pod('a') });
    expect(await w.next()).toMatchObject({ type: 'ADDED', object: { kind: 'Pod', metadata: { name: 'a' } } });
    await s.request('PATCH', '/api/v1/namespaces/w/pods/a', { body: { metadata: { labels: { x: '1' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(await w.next()).toMatchObject({ type: 'MODIFIED', object: { metadata: { name: 'a', labels: { x: '1' } } } });
    w.close();
  });

  it('serves the /watch/ path forms: one object, a namespace, everything', async () => {
    const one = await openWatch(s, '/api/v1/watch/namespaces/w/pods/a');
    expect(await one.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'a' } } });
    one.close();
    const inNs = await openWatch(s, '/api/v1/watch/namespaces/w/pods');
    expect(await inNs.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'a', namespace: 'w' } } });
    inNs.close();
    const all = await openWatch(s, '/api/v1/watch/namespaces');
    const names = new Set<string>();
    for (let i = 0; i < 2; i++) names.add((await all.next()).object.metadata.name);
    expect([...names].some((n) => n === 'w' || n === 'default')).toBe(true);
    all.close();
  });

  it('ends the stream cleanly after timeoutSeconds', async () => {
    const w = await openWatch(s, '/api/v1/namespaces/w/pods?watch=1&timeoutSeconds=1');
    expect(await w.next()).toMatchObject({ type: 'ADDED' });
    expect(await w.next()).toBeUndefined();
  });

  it('streams Table events when kubectl get -w asks for them', async () => {
    const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
    const w = await openWatch(s, '/api/v1/namespaces/w/pods?watch=true&fieldSelector=metadata.name%3Da', accept);
    const ev = await w.next();
    expect(ev).toMatchObject({ type: 'ADDED', object: { kind: 'Table', apiVersion: 'meta.k8s.io/v1' } });
    expect(ev.object.columnDefinitions[0].name).toBe('Name');
    expect(ev.object.rows).toHaveLength(1);
    expect(ev.object.rows[0].cells[0]).toBe('a');
    expect(ev.object.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'a' } });
    w.close();
  });

  it('refuses a watch it cannot serve with a Status, before streaming', async () => {
    expect((await s.request('GET', '/api/v1/namespaces/w/pods?watch=true', { headers: { accept: 'application/yaml' } })).status).toBe(406);
    expect((await s.request('GET', '/api/v1/namespaces/w/pods?watch=true&timeoutSeconds=x')).status).toBe(400);
    expect((await s.request('GET', '/api/v1/watch/namespaces/w/pods', { token: null })).status).toBe(401);
  });

  it('frees watches when clients go away: many open and close, the server still answers and closes', async () => {
    const watches = await Promise.all(Array.from({ length: 100 }, () => openWatch(s, '/api/v1/namespaces/w/pods?watch=true')));
    for (const w of watches) expect(await w.next()).toMatchObject({ type: 'ADDED' });
    for (const w of watches) w.close();
    await s.request('POST', '/api/v1/namespaces/w/pods', { body: pod('after') });
    expect((await s.request('GET', '/api/v1/namespaces/w/pods/after')).status).toBe(200);
  });
});

describe('shutdown', () => {
  it('ends open watches so close() returns promptly, and the client sees a clean end of stream', async () => {
    const s = await startTestServer('sqlite');
    await s.request('POST', '/api/v1/namespaces', { body: namespace('bye') });
    const w = await openWatch(s, '/api/v1/namespaces/bye/pods?watch=true');
    const started = Date.now();
    const closing = s.close();
    expect(await w.next()).toBeUndefined();
    await closing;
    expect(Date.now() - started).toBeLessThan(4000);
  });
});

describe.each(Backends)('watch below the retained window on %s storage', (backend) => {
  it('answers a compacted resourceVersion with an ERROR event carrying a 410 Expired Status, then ends', async () => {
    const s = await startTestServer(backend);
    try {
      await s.request('POST', '/api/v1/namespaces', { body: namespace('old') });
      for (const n of ['a', 'b', 'c']) await s.request('POST', '/api/v1/namespaces/old/pods', { body: pod(n) });
      const rv = Number((await s.request('GET', '/api/v1/namespaces/old/pods')).json.metadata.resourceVersion);
      await s.storage.compact(rv);
      const w = await openWatch(s, '/api/v1/namespaces/old/pods?watch=true&resourceVersion=1');
      // As kube-apiserver answers from its watch cache: the stream starts, then says 410 and ends.
      expect(w.res.status).toBe(200);
      expect(await w.next()).toMatchObject({ type: 'ERROR', object: { kind: 'Status', status: 'Failure', code: 410, reason: 'Expired' } });
      expect(await w.next()).toBeUndefined();
    } finally {
      await s.close();
    }
  });
});
