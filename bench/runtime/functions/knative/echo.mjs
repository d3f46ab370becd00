// Both runtimes parse an application/json body and pass it as the second argument.
export function handle(context, body) {
  return body;
}
