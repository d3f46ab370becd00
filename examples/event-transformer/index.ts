/**
 * A CloudEvent transformer: turns each `com.example.order.placed` event into a
 * `com.example.invoice.created` event with computed totals, and replies with it — a broker
 * that delivered the order routes the invoice on. Anything else gets a 400 problem.
 *
 *   func-runtime examples/event-transformer
 */
import type { CloudEventLike, Context, StructuredReturn } from '@func/runtime';

export interface OrderLine {
  sku: string;
  quantity: number;
  /** Unit price in cents: integers, so totals never suffer float rounding. */
  unitPrice: number;
}

export interface Order {
  orderId: string;
  currency: string;
  lines: OrderLine[];
}

export interface Invoice {
  invoiceFor: string;
  currency: string;
  lineCount: number;
  totalQuantity: number;
  total: number;
}

export const acceptedType = 'com.example.order.placed';
export const replyType = 'com.example.invoice.created';
export const replySource = '/examples/event-transformer';

const isCount = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 0;

function orderProblem(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return 'the data must be a JSON object';
  const { orderId, currency, lines } = data as Record<string, unknown>;
  if (typeof orderId !== 'string' || orderId === '') return 'orderId must be a non-empty string';
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) return 'currency must be an ISO 4217 code such as EUR';
  if (!Array.isArray(lines) || lines.length === 0) return 'lines must be a non-empty array';
  const bad = lines.findIndex((l: Record<string, unknown>) => typeof l?.sku !== 'string' || !isCount(l.quantity) || !isCount(l.unitPrice));
  return bad === -1 ? undefined : `lines[${bad}] needs a sku and integer quantity and unitPrice (cents) >= 0`;
}

export function toInvoice(order: Order): Invoice {
  return {
    invoiceFor: order.orderId,
    currency: order.currency,
    lineCount: order.lines.length,
    totalQuantity: order.lines.reduce((sum, l) => sum + l.quantity, 0),
    total: order.lines.reduce((sum, l) => sum + l.quantity * l.unitPrice, 0),
  };
}

function problem(title: string, detail: string): StructuredReturn {
  return { statusCode: 400, headers: { 'content-type': 'application/problem+json' }, body: { status: 400, title, detail } };
}

export function handle(context: Context, data?: unknown): CloudEventLike | StructuredReturn {
  const event = context.cloudevent;
  if (!event) return problem('Expected a CloudEvent', `POST a ${acceptedType} CloudEvent (binary or structured mode).`);
  if (event.type !== acceptedType) return problem('Unexpected event type', `Accepts ${acceptedType}, got ${event.type}.`);
  const why = orderProblem(data);
  if (why) return problem('Invalid order', why);

  const invoice = toInvoice(data as Order);
  context.log.info(`order ${invoice.invoiceFor} → invoice of ${invoice.total} ${invoice.currency}`);
  // The reply's id derives from the order event's id: a redelivered order yields the same invoice
  // id, and CloudEvents consumers deduplicate on id.
  return context.cloudEventResponse(invoice).type(replyType).source(replySource).id(`invoice-${event.id}`).response();
}
