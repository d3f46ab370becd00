/**
 * A webhook receiver that accepts a delivery only when its signature verifies: the sender signs
 * the exact request bytes with a shared secret (HMAC-SHA256, hex) and sends
 * `x-signature-256: sha256=<hex>` — GitHub's scheme; Stripe, Shopify and others differ only in
 * the header name and encoding.
 *
 * The signature covers the raw body, not the parsed JSON (re-serialising changes the bytes), so
 * the runtime must keep the bytes: the module asks for them with its `includeRaw` member.
 *
 *   WEBHOOK_SECRET=s3cret func-runtime examples/webhook
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Context, StructuredReturn } from '@func/runtime';

export const signatureHeader = 'x-signature-256';

/** Keep the request bytes in context.rawBody: the signature is checked over them. */
export const includeRaw = true;

/** `sha256=<hex>` of the body under `secret`: what a sender puts in the signature header. */
export function sign(body: Buffer | string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Constant-time comparison, so the response time leaks nothing about how much of a guess matched. */
function verify(body: Buffer | string, secret: string, signature: string): boolean {
  const expected = Buffer.from(sign(body, secret));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function problem(status: number, title: string, detail: string): StructuredReturn {
  return { statusCode: status, headers: { 'content-type': 'application/problem+json' }, body: { status, title, detail } };
}

export function handle(context: Context, body?: unknown): StructuredReturn {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) return problem(503, 'Webhook not configured', 'Set WEBHOOK_SECRET to the secret shared with the sender.');
  if (!context.rawBody) {
    return problem(500, 'Raw body unavailable', 'The runtime was started with includeRaw turned off (FUNC_INCLUDE_RAW=false or --no-include-raw); the signature needs the raw bytes.');
  }
  if (context.method !== 'POST') {
    return { ...problem(405, 'Method not allowed', 'Deliveries are POSTed.'), headers: { 'content-type': 'application/problem+json', allow: 'POST' } };
  }
  const signature = context.headers[signatureHeader];
  if (typeof signature !== 'string' || !verify(context.rawBody, secret, signature)) {
    // Never log the secret, the expected signature or the body of an unverified request.
    context.log.warn('webhook delivery rejected: missing or invalid signature');
    return problem(401, 'Invalid signature', `The ${signatureHeader} header must be sha256=<HMAC-SHA256 of the body, hex>.`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return problem(400, 'Invalid payload', 'The body must be a JSON object.');
  }
  const event = (body as { event?: unknown }).event;
  context.log.info(`webhook delivery accepted: ${typeof event === 'string' ? event : 'unnamed event'}`);
  return { statusCode: 202, body: { accepted: true, event: typeof event === 'string' ? event : null } };
}
