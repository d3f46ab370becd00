/**
 * The smallest function: answers every request with a greeting.
 * Run it with `func-runtime examples/hello`, then `curl localhost:8080/?name=you`.
 */
export const handle = (context) => {
  const name = context.query?.name ?? 'world';
  context.log.info(`greeting ${name}`);
  return `Hello, ${name}!\n`;
};
