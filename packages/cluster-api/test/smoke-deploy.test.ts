import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';
import { deployment, livePods, readyAll, waitFor } from './workload-helpers.js';

let s: TestServer;
beforeAll(async () => { s = await startTestServer('sqlite'); });
afterAll(async () => { await s.close(); });

it('smoke', async () => {
  const call = s.request;
  const r = await call('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('web', 3) });
  expect(r.status).toBe(201);
  await waitFor(async () => (await livePods(call, 'default', 'app=web')).length === 3, '3 pods');
  await readyAll(call, 'default', 'app=web');
  const d = await waitFor(async () => { const x = (await call('GET', '/apis/apps/v1/namespaces/default/deployments/web')).json; return x.status.availableReplicas === 3 && x; }, 'available');
  console.log(JSON.stringify(d, null, 1));
  const rs = (await call('GET', '/apis/apps/v1/namespaces/default/replicasets')).json;
  console.log(JSON.stringify(rs.items[0].metadata, null, 1), JSON.stringify(rs.items[0].status));
  const ev = (await call('GET', '/api/v1/namespaces/default/events')).json;
  console.log(ev.items.map((e: any) => `${e.involvedObject.kind} ${e.reason} ${e.message}`));
  console.log(s.logs);
});
