import { createTestServer, type TestServer } from '../../src/testing.js';
import type { FunctionModule, Handler, Options } from '../../src/types.js';

export type Served = TestServer;

/** Starts a function on 127.0.0.1 and a free port, through the public test helper. */
export function serve(fn: Handler | FunctionModule, options: Partial<Options> = {}): Promise<Served> {
  return createTestServer(fn, options);
}
