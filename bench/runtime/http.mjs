// One HTTP exchange with a fresh connection (no agent): used for readiness polling and reply checks.
import http from 'node:http';

/** @returns {Promise<{status: number, headers: import('node:http').IncomingHttpHeaders, body: string}>} */
export function request(port, { method = 'GET', path = '/', headers = {}, body } = {}, timeoutMs = 5000) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path, headers, agent: false, timeout: timeoutMs },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}
