import { createRequire } from 'node:module';
import pg from 'pg';
import { StatementFailed, type QueryResult } from './database.js';

/** How node-postgres turns a query's values into protocol values, so a batch binds exactly what `client.query` would. */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (value: unknown) => unknown };

/** One statement of a batch: its prepared-statement name when it is kept prepared, else unnamed. */
export interface BatchStatement {
  readonly name: string | undefined;
  readonly text: string;
  readonly values: readonly unknown[];
}

/** What node-postgres's connection offers a submittable query (pg/lib/connection.js). */
interface Connection {
  readonly stream: { cork?: () => void; uncork?: () => void };
  readonly parsedStatements: Record<string, string>;
  parse(message: { text: string; name?: string }): void;
  bind(message: { statement?: string; values: readonly unknown[]; valueMapper: (value: unknown) => unknown }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { rows: number }): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

interface FieldDescription {
  readonly name: string;
  readonly dataTypeID: number;
  readonly format: 'text' | 'binary';
}

type TypeParser = (value: string) => unknown;

/**
 * Whether every named statement of `statements` is already prepared on the client's connection,
 * so a batch needs no Parse of its own (a batch never prepares: node-postgres records a prepared
 * statement only for the query it is running, so the client would not know the batch's).
 */
export function batchable(client: pg.PoolClient, statements: readonly BatchStatement[]): boolean {
  const parsed = (client as unknown as { connection?: Connection }).connection?.parsedStatements;
  if (!parsed) return false;
  for (const statement of statements) if (statement.name !== undefined && parsed[statement.name] !== statement.text) return false;
  return true;
}

/**
 * Statements sent to PostgreSQL in one exchange on one connection: Bind, Describe and Execute for
 * each (an unnamed statement is parsed in place), then one Sync — one round trip however many
 * statements there are. They run in order, each seeing the effects of those before; the first
 * that fails ends the batch (PostgreSQL skips the rest up to the Sync) and the promise rejects
 * with `StatementFailed`. Inside an open transaction the Sync does not commit; outside one,
 * the statements run as one implicit transaction. A node-postgres "submittable": the client calls
 * `submit` when the connection is free and hands it the backend's messages until ReadyForQuery.
 */
export class StatementBatch {
  readonly done: Promise<QueryResult<Record<string, unknown>>[]>;
  readonly #statements: readonly BatchStatement[];
  readonly #parserOf: (oid: number, format: 'text' | 'binary') => TypeParser;
  readonly #results: QueryResult<Record<string, unknown>>[] = [];
  #fields: readonly FieldDescription[] = [];
  #parsers: TypeParser[] = [];
  #rows: Record<string, unknown>[] = [];
  #settle!: { resolve: (results: QueryResult<Record<string, unknown>>[]) => void; reject: (error: unknown) => void };
  #settled = false;

  constructor(statements: readonly BatchStatement[], parserOf: (oid: number, format: 'text' | 'binary') => TypeParser) {
    this.#statements = statements;
    this.#parserOf = parserOf;
    this.done = new Promise((resolve, reject) => (this.#settle = { resolve, reject }));
  }

  submit(connection: Connection): Error | null {
    connection.stream.cork?.();
    try {
      for (const statement of this.#statements) {
        if (statement.name === undefined) connection.parse({ text: statement.text });
        connection.bind({ statement: statement.name ?? '', values: statement.values, valueMapper: prepareValue });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ rows: 0 });
      }
      connection.sync();
    } catch (error) {
      // A value node-postgres cannot serialise: nothing of the batch went out but what is corked.
      return error instanceof Error ? error : new Error(String(error));
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(message: { fields: readonly FieldDescription[] }): void {
    this.#fields = message.fields;
    this.#parsers = message.fields.map((field) => this.#parserOf(field.dataTypeID, field.format));
  }

  handleDataRow(message: { fields: readonly (string | null)[] }): void {
    const row: Record<string, unknown> = {};
    const values = message.fields;
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      row[this.#fields[i]!.name] = value === null || value === undefined ? null : this.#parsers[i]!(value);
    }
    this.#rows.push(row);
  }

  handleCommandComplete(message: { text: string }): void {
    const count = /(\d+)$/.exec(message.text);
    this.#results.push({ rows: this.#rows, rowCount: count ? Number(count[1]) : 0 });
    this.#rows = [];
    this.#fields = [];
  }

  handleEmptyQuery(): void {
    this.#results.push({ rows: [], rowCount: 0 });
  }

  handleError(error: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#settle.reject(new StatementFailed(this.#results.length, error));
  }

  handleReadyForQuery(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#settle.resolve(this.#results);
  }

  handlePortalSuspended(): void {}

  handleCopyInResponse(connection: Connection): void {
    connection.sendCopyFail('a statement batch takes no COPY data');
  }

  handleCopyData(): void {}
}

/** node-postgres's type parser for a column, as its `Result` would pick it. */
export function typeParserOf(types: pg.CustomTypesConfig): (oid: number, format: 'text' | 'binary') => TypeParser {
  return (oid, format) => types.getTypeParser(oid, format) as TypeParser;
}
