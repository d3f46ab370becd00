/**
 * Failures the user can act on. The CLI prints `message` alone (no stack) and exits with
 * `exitCode`; anything else is a bug and is printed in full.
 */
export class CreateError extends Error {
  override readonly name = 'CreateError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** The user stopped us (Ctrl-C, or the terminal went away): 128 + the signal's number, like a shell. */
export class InterruptedError extends CreateError {
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted (${signal}): nothing was created`, signal === 'SIGINT' ? 130 : signal === 'SIGHUP' ? 129 : 143);
  }
}
