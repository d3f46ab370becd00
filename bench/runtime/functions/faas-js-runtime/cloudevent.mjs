// faas-js-runtime 4 passes the whole CloudEvent as the second argument (func-runtime passes its data).
export function handle(context, event) {
  return context
    .cloudEventResponse(event.data)
    .type('dev.func.bench.pong')
    .source('/bench/fn')
    .response();
}
