/**
 * A mistake by whoever called: bad input, a name already taken, a missing record.
 * Routes turn it into a 4xx and the CLI into a one-line message; it is never logged as a fault.
 */
export class UserInputError extends Error {
  /** Each offending field (or parameter), as the caller named it, with what is wrong. */
  readonly fields?: Readonly<Record<string, string>>;

  constructor(
    message: string,
    readonly status: 400 | 403 | 404 | 409 = 400,
    /**
     * The offending fields. Give a `Map` when the names come from the caller: the record made
     * from it has every name as an own property, `__proto__` and `constructor` included.
     */
    fields?: Readonly<Record<string, string>> | ReadonlyMap<string, string>,
  ) {
    super(message);
    this.name = 'UserInputError';
    if (fields) this.fields = Object.fromEntries(fields instanceof Map ? fields : Object.entries(fields));
  }
}

/**
 * A write the API key's role may not make (a field outside its columns, a row outside its
 * filter or failing its check): 403 with the role and the permission named, as a missing
 * permission is answered.
 */
export class PermissionRefused extends UserInputError {
  constructor(
    message: string,
    readonly role: string,
    readonly permission: string,
    fields: ReadonlyMap<string, string>,
  ) {
    super(message, 403, fields);
    this.name = 'PermissionRefused';
  }
}

/** PostgreSQL's text cannot hold U+0000; a value carrying it is refused before any statement. */
export function hasNulCharacter(text: string): boolean {
  return text.includes('\u0000');
}

export const NUL_PROBLEM = 'contains a NUL character (\\u0000), which text cannot hold';

/** Throws a 400 naming `field` when `value` holds a NUL character. */
export function refuseNulCharacter(field: string, value: string): void {
  if (hasNulCharacter(value)) throw new UserInputError(`${field} ${NUL_PROBLEM}`, 400, new Map([[field, NUL_PROBLEM]]));
}
