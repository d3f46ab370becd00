// The function the autoscale bench calls: `?ms=N` holds the request N ms (work that keeps a
// concurrency slot busy without burning CPU), then answers "ok".
export async function handle(context) {
  const ms = Number(context.query?.ms ?? 0);
  if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
  return 'ok';
}
