import type { Context, LogLevel, StructuredReturn } from '@func/runtime';

/** Log level of the function's logger: FUNC_LOG_LEVEL overrides it (e.g. in func.yaml run.envs). */
export const logLevel: LogLevel = 'info';

/**
 * Your HTTP function, invoked with each request: it logs the request and answers with a
 * structured text reply (status, headers and body).
 *
 * Run it with `npm start`, call it with `npm run invoke` or `curl 'localhost:8080/?name=you'`,
 * test it with `npm test`.
 *
 * @param context the request: method, path, query, headers, parsed body, and a logger.
 * @param body the parsed request body, if any (a JSON body arrives as an object).
 */
export const handle = async (context: Context, body?: unknown): Promise<StructuredReturn> => {
  context.log.info(`${context.method} ${context.path} received`);

  const name = firstValue(context.query?.name) ?? 'world';
  const lines = [`Hello, ${name}!`, `You sent ${context.method} ${context.path}.`];
  if (body !== undefined && body !== '') lines.push(`Body: ${JSON.stringify(body)}`);

  return {
    statusCode: 200,
    headers: { 'content-type': 'text/plain; charset=utf-8' },
    body: `${lines.join('\n')}\n`,
  };
};

/** A query parameter given twice (`?name=a&name=b`) arrives as an array: use the first. */
function firstValue(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first !== '' ? first : undefined;
}
