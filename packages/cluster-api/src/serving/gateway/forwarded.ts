/** `X-Forwarded-For`/`-Host`/`-Proto` as the gateway sends them to a pod: the client's address appended to any it came with; the host and scheme it came with, else its own. */
export const forwardedHeaders = (remote: string, prior: { for?: string; host?: string; proto?: string }, originalHost: string) => ({
  'x-forwarded-for': prior.for ? `${prior.for}, ${remote}` : remote,
  'x-forwarded-host': prior.host ?? originalHost,
  'x-forwarded-proto': prior.proto ?? 'http',
});
