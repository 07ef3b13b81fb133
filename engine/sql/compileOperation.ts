import type { Metadata } from '../../metadata/index.js';
import { assertNever, type OperationPlan, type RootField } from '../plan/ir.js';
import { render, sql, type Fragment, type RenderedSql } from './fragment.js';
import { selectCompiler, type SelectCompiler } from './selectCompiler.js';

/**
 * Renders a plan that went through the passes (`plan/passes/index.ts`, run by the caller) into ONE statement returning the finished
 * response text `{"data":…}`. Every table reference carries the tenant predicate; every value is
 * a parameter. Pure and deterministic: aliases come from a counter, so golden SQL stays stable.
 *
 * The response is assembled as compact JSON text (`jsonText.ts`): keys are JSON-encoded here
 * and written with their `{`/`,` and `:` (`{"loans":`), scalars go through `to_json` (the
 * encoder `json_build_object` uses, so numbers keep PostgreSQL's exact digits and dates their
 * ISO form), objects through one `concat(…)`, lists through `ARRAY(SELECT … ORDER BY …)` sublinks. Key
 * order is the selection order. Values of `jsonb` columns keep PostgreSQL's jsonb text form.
 * Shared scans are rendered first (their aliases come first) and joined as FROM items.
 */
export function compileOperation(plan: OperationPlan, metadata: Metadata): RenderedSql {
  const compiler = selectCompiler(metadata);
  const scans = plan.sharedScans.map((scan) => compiler.sharedScan(scan));
  const data = compiler.jsonObject(
    plan.rootFields.map((field) => (field.kind === 'sharedAggregate' ? ([field.alias, scans[field.scan]!.values[field.member]!] as const) : rootField(compiler, field))),
  );
  const from = scans.length ? sql` FROM ${sql.join(scans.map((scan) => scan.from))}` : sql``;
  return render(sql`SELECT concat('{"data":', ${data}, '}') AS ${sql.ident('response')}${from}`);
}

function rootField(compiler: SelectCompiler, field: Exclude<RootField, { kind: 'sharedAggregate' }>): readonly [string, Fragment] {
  const { jsonString, list, aggregate, nextAlias, rowObject, rowPredicate, fieldValue, param } = compiler;
  switch (field.kind) {
    case 'typename':
      return [field.alias, jsonString(field.value)];
    case 'select':
      return [field.alias, list(field.collection, field.query, field.selection, null)];
    case 'selectAggregate':
      return [field.alias, aggregate(field.collection, field.query, field.aggregate, null)];
    case 'selectByPk': {
      const table = nextAlias('t');
      const key = sql.join(
        field.key.map(({ field: keyField, value }) => sql`${fieldValue(table, keyField)} = ${param(value, keyField.type)}`),
        sql` AND `,
      );
      return [
        field.alias,
        sql`coalesce((SELECT ${rowObject(field.collection, field.selection, table)} FROM ${sql.qualified(field.collection.schema, field.collection.table)} AS ${table} WHERE ${rowPredicate(field.collection, table)} AND ${key}), 'null')`,
      ];
    }
    default:
      return assertNever(field);
  }
}
