/** A real listening error-api on 127.0.0.1, started with the runtime's own `start()`. */
import type { Server } from 'node:http';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runtimeErrors, start, stop } from '@func/runtime';
import { createErrorApi, type ErrorApi } from '../src/index.js';

export interface Running {
  api: ErrorApi;
  server: Server;
  /** `http://127.0.0.1:<port>`: also the base URL the service derives from Host. */
  url: string;
  announced: string[];
  close(): Promise<void>;
}

export const startService = async (env: Record<string, string>): Promise<Running> => {
  const announced: string[] = [];
  const api = createErrorApi({ env, runtimeErrors, announce: (line) => announced.push(line), logLevel: 'silent' });
  const server = await start(api, { port: 0, host: '127.0.0.1', logLevel: 'silent' });
  const { port } = server.address() as AddressInfo;
  return { api, server, url: `http://127.0.0.1:${port}`, announced, close: () => stop(server) };
};

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http rather than fetch, so Host and other forbidden headers can be sent as a client would. */
export const raw = (url: string, path: string, method = 'GET', headers: Record<string, string> = {}): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
