/**
 * `func-runtime invoke [url]`: Knative's `func invoke` for a running function. Prints the reply;
 * exit code 0 for a 1xx–3xx reply, 1 for 4xx/5xx, 2 for bad flags, 3 when nothing answered.
 */
import type { Argv, CommandModule } from 'yargs';
import { localFunctionUrl } from '../client/invoke-request.js';
import type { Exit } from '../lifecycle.js';
import { withClusterFlags, type ClusterFlags } from './deploy-flags.js';

export const INVOKE_EXIT = { ok: 0, errorStatus: 1, usage: 2, unreachable: 3 } as const;

interface InvokeArgs extends ClusterFlags {
  url: string;
  method?: string;
  header: string[];
  data?: string;
  'data-file'?: string;
  'content-type': string;
  cloudevent: boolean;
  type: string;
  source: string;
  id?: string;
  timeout: number;
  broker?: string;
  name?: string;
  async: boolean;
  'callback-url'?: string;
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'the host is unreachable',
  UND_ERR_SOCKET: 'the connection closed before a reply',
};

/** fetch() wraps the socket error in `cause`; say what happened, in words, with the code. */
function unreachable(url: URL, err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: NodeJS.ErrnoException };
  if (e?.name === 'TimeoutError') return `no reply from ${url.href} within ${timeoutMs} ms (change it with --timeout).`;
  const code = e?.cause?.code;
  const reason = code ? `${REASONS[code] ?? e.cause?.message ?? code} (${code})` : (e?.cause?.message ?? e?.message ?? String(err));
  const hint = code === 'ECONNREFUSED' ? ' Is the function running? Start it with `func-runtime dev` or `func-runtime`, or pass its URL.' : '';
  return `cannot reach ${url.href}: ${reason}.${hint}`;
}

/** `--async <name>`: a bare function name (no scheme, not a path) is a deployed function's. */
const isName = (s: string) => /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(s);

async function invoke(argv: InvokeArgs, exit: Exit): Promise<void> {
  if (argv.async && argv.broker !== undefined) {
    process.stderr.write('func-runtime invoke: --async invokes a function, --broker sends to a Broker: use one\n');
    return exit(INVOKE_EXIT.usage);
  }
  if (argv['callback-url'] !== undefined && !argv.async) {
    process.stderr.write('func-runtime invoke: --callback-url needs --async\n');
    return exit(INVOKE_EXIT.usage);
  }
  if (argv.async && argv.name === undefined && isName(argv.url)) argv = { ...argv, name: argv.url, url: '/' };
  const { buildRequest, InvokeUsageError } = await import('../client/invoke-request.js');
  const { describeResponse } = await import('../client/print-response.js');
  const { send } = await import('../client/loopback-fetch.js');
  const target =
    argv.broker !== undefined ? await (await import('../client/broker-target.js')).invokeTarget(argv.broker)
    : argv.name !== undefined ? await (await import('../client/deployed-target.js')).deployedTarget({ ...argv, name: argv.name, path: argv.url })
    : { url: argv.url };
  if ('message' in target) {
    process.stderr.write(`func-runtime invoke: ${target.message}\n`);
    return exit(INVOKE_EXIT[target.exit]);
  }
  let req;
  try {
    req = buildRequest({ ...argv, url: target.url, cloudevent: argv.cloudevent || argv.broker !== undefined, dataFile: argv['data-file'], contentType: argv['content-type'] });
  } catch (err) {
    if (!(err instanceof InvokeUsageError)) throw err;
    process.stderr.write(`func-runtime invoke: ${err.message}\n`);
    return exit(INVOKE_EXIT.usage);
  }
  if (argv.async) {
    // RFC 7240: the gateway queues the request and answers 202 at once; the answer goes to the callback.
    req.headers.prefer = 'respond-async';
    if (argv['callback-url'] !== undefined) req.headers['x-callback-url'] = argv['callback-url'];
  }
  if (req.event) process.stderr.write(`Sending CloudEvent id=${req.event.id} type=${req.event.type} source=${req.event.source} to ${req.url.href}\n`);
  let res: Response;
  try {
    res = await send(req.url, { method: req.method, headers: req.headers, body: req.body, redirect: 'manual', signal: AbortSignal.timeout(argv.timeout) });
  } catch (err) {
    process.stderr.write(`func-runtime invoke: ${unreachable(req.url, err, argv.timeout)}\n`);
    return exit(INVOKE_EXIT.unreachable);
  }
  const body = Buffer.from(await res.arrayBuffer());
  process.stdout.write(describeResponse({ status: res.status, statusText: res.statusText, headers: [...res.headers.entries()], body }));
  if (argv.async && res.status < 400) {
    const queued = res.status === 202 && /(^|,)\s*respond-async\s*(,|;|$)/i.test(res.headers.get('preference-applied') ?? '');
    process.stderr.write(queued ? `Queued: call id ${res.headers.get('x-call-id') ?? '(none)'}\n` : 'The server did not queue the request (no Preference-Applied: respond-async): the reply above is the function\'s own.\n');
  }
  exit(res.status >= 400 ? INVOKE_EXIT.errorStatus : INVOKE_EXIT.ok);
}

export function invokeCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, InvokeArgs> {
  return {
    command: 'invoke [url]',
    describe: 'Send an HTTP request or a CloudEvent to a running function and print the reply',
    builder: (y) =>
      withClusterFlags(y).positional('url', { type: 'string', default: localFunctionUrl(), describe: 'the function\'s URL, or a path on http://localhost:$PORT (8080 when PORT is unset)' })
        .option('method', { alias: 'X', type: 'string', describe: 'HTTP method [default: GET, or POST with data or --cloudevent]' })
        .option('header', { alias: 'H', type: 'string', array: true, default: [], describe: 'a request header, "Name: value" (repeatable)' })
        .option('data', { alias: 'd', type: 'string', describe: 'request body (the event data with --cloudevent)' })
        .option('data-file', { type: 'string', describe: 'read the body / event data from this file' })
        .option('content-type', { type: 'string', default: 'application/json', describe: 'content type of the data' })
        .option('cloudevent', { type: 'boolean', default: false, describe: 'send a binary-mode CloudEvent' })
        .option('type', { type: 'string', default: 'boson.fn', describe: 'CloudEvent type' })
        .option('source', { type: 'string', default: '/boson/fn', describe: 'CloudEvent source' })
        .option('id', { type: 'string', describe: 'CloudEvent id [default: a random UUID]' })
        .option('timeout', { type: 'number', default: 30_000, describe: 'ms to wait for the reply' })
        .option('name', { type: 'string', describe: 'a deployed function\'s name: invoke it where deploy said it answers (a Knative Service through the local gateway); a path as the URL goes on it' })
        .option('async', { type: 'boolean', default: false, describe: 'invoke asynchronously (Prefer: respond-async): the gateway queues the request and answers 202 with its call id; the URL, or a deployed function\'s name' })
        .option('callback-url', { type: 'string', describe: 'with --async: where the function\'s answer is POSTed (X-Callback-Url)' })
        .option('broker', { type: 'string', describe: 'send the CloudEvent into a Knative Broker instead: its URL, or <namespace>/<name> or <name> looked up with the kubeconfig' }) as unknown as Argv<InvokeArgs>,
    handler: (argv) => invoke(argv, exit).catch(onError),
  };
}
