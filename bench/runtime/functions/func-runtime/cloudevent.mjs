// The second argument is the event's parsed data (spec 001).
export function handle(context, data) {
  return context.cloudEventResponse(data).type('dev.func.bench.pong').source('/bench/fn').response();
}
