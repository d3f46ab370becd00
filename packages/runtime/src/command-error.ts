/**
 * A command that cannot do what it was asked (build an image, deploy, describe…) for a reason the
 * user can act on: the message is complete, and cli.ts prints it as one paragraph with exit 1.
 */
export class CommandError extends Error {
  override name = 'CommandError';
}
