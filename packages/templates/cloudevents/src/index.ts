import type { CloudEvent } from 'cloudevents';
import type { Context, LogLevel, StructuredReturn } from '@func/runtime';

/** The data of the events this function accepts (type `com.example.customer.created`). */
export interface Customer {
  name: string;
  customerId: string;
}

/** The data of the event it replies with (type `com.example.customer.greeted`). */
export interface Greeting {
  customerId: string;
  message: string;
}

/** Log level of the function's logger: FUNC_LOG_LEVEL overrides it (e.g. in func.yaml run.envs). */
export const logLevel: LogLevel = 'info';

export const replyType = 'com.example.customer.greeted';
export const replySource = '/{{name}}';

/**
 * Your CloudEvents function, invoked with each event: it logs the event and replies with a new
 * CloudEvent carrying a `Greeting`. A broker that delivered the event routes the reply on.
 *
 * Run it with `npm start`, send it an event with `npm run invoke`, test it with `npm test`.
 *
 * @param context the request; `context.cloudevent` is the incoming event.
 * @param data the event's data, parsed (a JSON payload arrives as an object).
 */
export const handle = async (
  context: Context,
  data?: unknown,
): Promise<CloudEvent<Greeting> | StructuredReturn> => {
  const event = context.cloudevent;
  if (!event) return problem(400, 'Expected a CloudEvent', 'Send a CloudEvent (binary or structured mode).');
  if (!isCustomer(data)) {
    return problem(400, 'Invalid event data', 'The data must be a JSON object with string fields name and customerId.');
  }

  context.log.info(`${event.type} ${event.id} from ${event.source}`);
  const greeting: Greeting = { customerId: data.customerId, message: `Hello, ${data.name}!` };
  return context.cloudEventResponse(greeting).type(replyType).source(replySource).response<Greeting>();
};

function isCustomer(data: unknown): data is Customer {
  if (typeof data !== 'object' || data === null) return false;
  const { name, customerId } = data as Record<string, unknown>;
  return typeof name === 'string' && name !== '' && typeof customerId === 'string' && customerId !== '';
}

/** An RFC 9457 problem-details reply, the same shape the runtime's own errors use. */
function problem(status: number, title: string, detail: string): StructuredReturn {
  return {
    statusCode: status,
    headers: { 'content-type': 'application/problem+json' },
    body: { status, title, detail },
  };
}
