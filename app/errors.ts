/**
 * A mistake by whoever called: bad input, a name already taken, a missing record.
 * Routes turn it into a 4xx and the CLI into a one-line message; it is never logged as a fault.
 */
export class UserInputError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 404 | 409 = 400,
    /** Each offending field (or parameter), as the caller named it, with what is wrong. */
    readonly fields?: Readonly<Record<string, string>>,
  ) {
    super(message);
    this.name = 'UserInputError';
  }
}
