import type { Queryable } from '../../db/index.js';
import type { EventOperation, EventPayloadRelationship, EventType } from '../../metadata/index.js';

/**
 * The capture trigger function of one table, generated from the metadata's event types of that
 * table (migration 0008 replaced one generic function that looked the event types up and turned
 * the whole row into JSON on every write).
 *
 * Per operation, for each event type in name order: its condition as plain column comparisons,
 * then ONE statement, `INSERT INTO webhook_outbox … SELECT … WHERE EXISTS (probe)`: the probe is
 * one index lookup (`webhook_endpoints_active`) for an active endpoint of the row's account
 * subscribed to the type (an account without one stores nothing), and the payload is
 * `json_build_object` of the named columns (`json`, cheaper to build than `jsonb`: migration
 * 0010; the worker turns it into `jsonb` when it fans the row out to endpoints, `worker.ts`).
 * One statement rather than `IF EXISTS (probe) THEN INSERT`: one executor run per event instead
 * of two. The session setting `loanql.capture_events = off` turns capture off; it is tested in
 * the trigger's `WHEN` clause (`captureTriggerSql`), so a write with capture off does not even
 * enter the function. bench/README.md ("Webhooks") has what each part costs a write.
 *
 * The conditions keep the meaning the generic function gave them over `to_jsonb(row)`:
 * `changed` — a column is distinct; `set` — each column goes from null (SQL NULL or JSON null)
 * to a value; `becomes` — each column's JSON value is the given one and was not before.
 *
 * An event type whose payload names relationships is captured by a second function of the table,
 * `loanql_capture_<table>_at_commit()`, run by a deferred constraint trigger when the transaction
 * commits (`CapturePhase`): each relationship is one scalar subquery (an object's row, or an
 * array's `json_agg` in its order) reached by the tenant column and the relationship's columns,
 * nested relationships inside it, so the payload holds the related rows as the write left them.
 *
 * An event type whose payload holds an amount (`EventType.withCurrency`) adds `currency`, the
 * account's ISO code as the event is captured, to `data` beside `old` and `new`.
 *
 * Identifiers are checked names of the resolved metadata (`^[a-z_][a-z0-9_]*$`, found in the
 * catalogue) and double-quoted; every literal (event type names, payload keys, `becomes` values)
 * is quoted by PostgreSQL itself (`quote_literal`, with the values sent as a bound parameter),
 * since a function body cannot take parameters.
 */

/**
 * When a table's events are captured. `row`: as each row is written (an AFTER ROW trigger; the
 * payload is the row's columns). `commit`: when the transaction commits (a deferred constraint
 * trigger), for event types whose payload names relationships — their rows are read once the
 * transaction has written them all (the ledger's replay runs in statement-level triggers after
 * the row ones, and a later statement of the same transaction can replay again), so the payload
 * is what every reader sees once the write is committed.
 */
export type CapturePhase = 'row' | 'commit';

/**
 * Which phase captures an event type: `commit` when its payload names relationships, or when it
 * is a delete (captured only if the row is still gone at commit: `EventType.primaryKey`).
 */
export function capturePhaseOf(eventType: EventType): CapturePhase {
  return eventType.related.length || eventType.operation === 'DELETE' ? 'commit' : 'row';
}

/** Name of the capture function of `table` for a phase. */
export function captureFunctionName(table: string, phase: CapturePhase = 'row'): string {
  return phase === 'row' ? `loanql_capture_${table}` : `loanql_capture_${table}_at_commit`;
}

export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Pairs per `jsonb_build_object` call (a function takes at most 100 arguments). */
const PAIRS_PER_CALL = 40;

const OPERATIONS: readonly EventOperation[] = ['INSERT', 'UPDATE', 'DELETE'];

/** The `CREATE OR REPLACE FUNCTION` statement for one table's event types of one phase. */
export async function captureFunctionSql(db: Queryable, table: string, eventTypes: readonly EventType[], phase: CapturePhase = 'row'): Promise<string> {
  const sorted = [...eventTypes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const literal = await quoteLiterals(db, sorted);
  const column = (row: string, name: string): string => `${row}.${quoteIdentifier(name)}`;
  const jsonObject = (pairs: readonly string[]): string => {
    if (!pairs.length) return `'{}'::json`;
    if (pairs.length <= PAIRS_PER_CALL) return `json_build_object(${pairs.join(', ')})`;
    // json has no `||`: a payload of more columns than one call takes is merged as jsonb.
    const calls: string[] = [];
    for (let i = 0; i < pairs.length; i += PAIRS_PER_CALL) calls.push(`jsonb_build_object(${pairs.slice(i, i + PAIRS_PER_CALL).join(', ')})`);
    return `(${calls.join(' || ')})::json`;
  };
  const columnPairs = (row: string, payload: ReadonlyMap<string, string>): string[] => [...payload].map(([key, name]) => `${literal(key)}, ${column(row, name)}`);
  // Related rows: one scalar subquery per relationship, reached by the tenant column and the
  // relationship's columns (an index of the target serves it: payment_allocations_payment,
  // the loans' primary key). Aliases are counted, so the text is deterministic.
  let aliases = 0;
  const relatedValue = (parent: string, relationship: EventPayloadRelationship): string => {
    const alias = `r${(aliases += 1)}`;
    const pairs = [...columnPairs(alias, relationship.payload), ...relationship.related.map((nested) => `${literal(nested.key)}, ${relatedValue(alias, nested)}`)];
    const join = [`${alias}.account_id = ${parent}.account_id`, ...relationship.mapping.map(([from, to]) => `${column(alias, to)} = ${column(parent, from)}`)].join(' AND ');
    const from = `FROM ${quoteIdentifier(relationship.table)} ${alias} WHERE ${join}`;
    if (relationship.kind === 'object') return `(SELECT ${jsonObject(pairs)} ${from} LIMIT 1)`;
    const order = [...relationship.orderBy, ...relationship.primaryKey].map((name) => column(alias, name)).join(', ');
    return `(SELECT coalesce(json_agg(${jsonObject(pairs)} ORDER BY ${order}), '[]'::json) ${from})`;
  };
  // Relationships go with the operation's own row (NEW; OLD for a delete) and are read as the
  // transaction leaves them: an update's old payload is its columns (the related rows as they
  // were are gone by then), a deleted row's children are gone (its parents are not).
  const payload = (row: 'NEW' | 'OLD', eventType: EventType, withRelated: boolean): string =>
    jsonObject([...columnPairs(row, eventType.payload), ...(withRelated ? eventType.related.map((relationship) => `${literal(relationship.key)}, ${relatedValue(row, relationship)}`) : [])]);
  const isNullish = (expression: string): string => `coalesce(jsonb_typeof(to_jsonb(${expression})), 'null') = 'null'`;
  const asJson = (expression: string): string => `coalesce(to_jsonb(${expression}), 'null'::jsonb)`;
  const condition = (eventType: EventType): string[] => {
    const parts: string[] = [];
    const { changed, set, becomes } = eventType.condition;
    if (changed) parts.push(changed.length ? `(${changed.map((c) => `${column('OLD', c)} IS DISTINCT FROM ${column('NEW', c)}`).join(' OR ')})` : 'false');
    for (const c of set ?? []) parts.push(`${isNullish(column('OLD', c))} AND NOT ${isNullish(column('NEW', c))}`);
    for (const [c, value] of becomes ?? []) {
      const json = `${literal(JSON.stringify(value))}::jsonb`;
      parts.push(`${asJson(column('NEW', c))} = ${json} AND ${asJson(column('OLD', c))} <> ${json}`);
    }
    return parts;
  };

  // A delete (captured at commit): only if no row has the deleted row's key by then — deleted and
  // written again under its key in one transaction (the ledger's replay deriving a late fee
  // anew), the row was not removed, and its insert's event says what it is now. Tested after the
  // endpoint probe, so an account without webhooks pays that one probe for a delete too.
  const stillGone = (eventType: EventType): string => {
    if (!eventType.primaryKey.length) return '';
    const keyColumns = eventType.primaryKey.includes('account_id') ? eventType.primaryKey : ['account_id', ...eventType.primaryKey];
    const match = keyColumns.map((name) => `${column('k', name)} = ${column('OLD', name)}`).join(' AND ');
    return ` AND NOT EXISTS (SELECT 1 FROM ${quoteIdentifier(table)} k WHERE ${match})`;
  };

  const branches: string[] = [];
  for (const operation of OPERATIONS) {
    const ofOperation = sorted.filter((eventType) => eventType.operation === operation);
    if (!ofOperation.length) continue;
    const row = operation === 'DELETE' ? 'OLD' : 'NEW';
    const statements = ofOperation.map((eventType) => {
      const type = literal(eventType.name);
      // An event whose payload holds an amount carries the account's currency (one primary-key
      // lookup, made only for an event some endpoint takes: the select list follows the WHERE).
      const currency = eventType.withCurrency ? `, 'currency', (SELECT a.currency FROM accounts a WHERE a.id = ${row}.account_id)` : '';
      const data = `json_build_object('old', ${operation === 'INSERT' ? 'NULL::json' : payload('OLD', eventType, operation === 'DELETE')}, 'new', ${operation === 'DELETE' ? 'NULL::json' : payload('NEW', eventType, true)}${currency})`;
      const capture = [
        `INSERT INTO webhook_outbox (account_id, type, data) SELECT ${row}.account_id, ${type}, ${data}`,
        ` WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.account_id = ${row}.account_id AND e.active AND (e.event_types IS NULL OR ${type} = ANY (e.event_types)))${operation === 'DELETE' ? stillGone(eventType) : ''};`,
      ];
      const conditions = condition(eventType);
      if (!conditions.length) return capture.join('\n      ');
      return [`IF ${conditions.join(' AND ')} THEN`, ...capture.map((line) => `  ${line}`), 'END IF;'].join('\n      ');
    });
    branches.push(`${branches.length ? 'ELSIF' : 'IF'} TG_OP = '${operation}' THEN\n      ${statements.join('\n      ')}`);
  }
  return `CREATE OR REPLACE FUNCTION ${quoteIdentifier(captureFunctionName(table, phase))}() RETURNS trigger LANGUAGE plpgsql AS $capture$
BEGIN
  ${branches.join('\n  ')}
  END IF;
  RETURN NULL;
END $capture$`;
}

/**
 * The `CREATE TRIGGER` statement that attaches `table`'s capture function of a phase: after each
 * row (`row`), or as a constraint trigger deferred to the commit (`commit`); either way unless
 * the session turned capture off (`loanql.capture_events = off`: the seeder), tested in `WHEN` —
 * which PostgreSQL evaluates when the row is written, even for a deferred trigger — so that such
 * a write does not call the function at all.
 */
export function captureTriggerSql(trigger: string, table: string, phase: CapturePhase = 'row'): string {
  const when = ` WHEN (current_setting('loanql.capture_events', true) IS DISTINCT FROM 'off') EXECUTE FUNCTION ${quoteIdentifier(captureFunctionName(table, phase))}()`;
  if (phase === 'row') return `CREATE TRIGGER ${quoteIdentifier(trigger)} AFTER INSERT OR UPDATE OR DELETE ON ${quoteIdentifier(table)} FOR EACH ROW` + when;
  return `CREATE CONSTRAINT TRIGGER ${quoteIdentifier(trigger)} AFTER INSERT OR UPDATE OR DELETE ON ${quoteIdentifier(table)} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW` + when;
}

/** Every literal the function bodies of these event types need, quoted by PostgreSQL. */
async function quoteLiterals(db: Queryable, eventTypes: readonly EventType[]): Promise<(value: string) => string> {
  const values = new Set<string>();
  for (const eventType of eventTypes) {
    values.add(eventType.name);
    for (const key of eventType.payload.keys()) values.add(key);
    const relatedKeys = (related: readonly EventPayloadRelationship[]): void => {
      for (const relationship of related) {
        values.add(relationship.key);
        for (const key of relationship.payload.keys()) values.add(key);
        relatedKeys(relationship.related);
      }
    };
    relatedKeys(eventType.related);
    for (const value of eventType.condition.becomes?.values() ?? []) values.add(JSON.stringify(value));
  }
  const list = [...values];
  const { rows } = await db.query<{ quoted: string }>('SELECT quote_literal(v) AS quoted FROM unnest($1::text[]) WITH ORDINALITY AS u(v, n) ORDER BY n', [list]);
  const quoted = new Map(list.map((value, i) => [value, rows[i]!.quoted]));
  return (value: string): string => {
    const text = quoted.get(value);
    if (text === undefined) throw new Error(`capture function: literal not quoted: ${value}`);
    return text;
  };
}
