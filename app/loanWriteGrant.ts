import type { Database, Queryable } from '../db/index.js';
import type { Principal } from '../engine/index.js';
import { ADMIN_ROLE, type Field, type InsertPermission, type Role, type UpdatePermission } from '../metadata/index.js';
import { PermissionRefused, UserInputError } from './errors.js';
import type { LoanChanges } from './loanInput.js';
import type { LoanReader } from './loanReads.js';
import { BUILT_IN_FIELDS, type Product } from './products.js';

/**
 * What an API key's role lets a REST loan write do (issue 26, finding 1): the same `columns`,
 * `filter`, `check` and `set` of the role's `loans` permission that GraphQL mutations obey.
 *
 * - `columns`: every field the body gives must be one the role may write. A built-in field is
 *   allowed when the role's columns include a field stored in its column; a custom field when
 *   they include the whole `custom_fields` column or a field exposing that very key. Contacts
 *   (`Borrower_…`, `Guarantor_…`) write people and links: they need `people.insert` and
 *   `people.update` and the insert permission of `borrows` / `guarantees`.
 * - `filter` (update): a loan outside it is, to this key, no such loan — checked inside the
 *   write's transaction, on the locked row.
 * - `check`: the written loan must satisfy it afterwards, or the transaction is rolled back.
 * - `set`: the role's presets are written last, whatever the body says.
 *
 * The admin role is the account's own: REST keeps the schedule's inputs (amount, rate, …) for it,
 * which GraphQL never writes. Dashboard sessions and the CLI act as the account's admin.
 */
export interface LoanWriteGrant {
  /** Throws `PermissionRefused` naming each body field the role may not write. */
  checkChanges(changes: LoanChanges): void;
  /** Whether the role's update filter lets it write this loan (true for insert and admin). */
  mayWrite(tx: Queryable, loanId: string): Promise<boolean>;
  /** Writes the role's presets, then throws `PermissionRefused` when the loan fails the role's check. */
  finish(tx: Queryable, loanId: string): Promise<void>;
}

/** The admin's grant: REST's own rules, nothing more. */
export const ADMIN_GRANT: LoanWriteGrant = {
  checkChanges: () => undefined,
  mayWrite: async () => true,
  finish: async () => undefined,
};

type Kind = 'insert' | 'update';

/**
 * The grant of `role` for a loan write of `kind`. `asDatabase` turns the write's transaction
 * into a `Database` the reader can query (so the checks see the uncommitted row).
 */
export function loanWriteGrant(
  role: Role,
  kind: Kind,
  principal: Principal,
  product: Product,
  reader: LoanReader,
  asDatabase: (tx: Queryable) => Database,
): LoanWriteGrant {
  if (role.name === ADMIN_ROLE) return ADMIN_GRANT;
  const collections = role.metadata.collections;
  const permission: InsertPermission | UpdatePermission | null = collections.get('loans')?.[kind] ?? null;
  const permissionName = `loans.${kind}`;
  const refuse = (fields: Map<string, string>, what: string): never => {
    throw new PermissionRefused(`this API key's role ${role.name} may not ${what}`, role.name, `${permissionName}.columns`, fields);
  };
  const filter = kind === 'update' && permission ? (permission as UpdatePermission).filter : null;
  const check = permission?.check ?? null;
  const keyVariables = typeof principal === 'string' ? new Map<string, unknown>() : principal.keyVariables;
  return {
    checkChanges(changes) {
      if (!permission) return refuse(new Map(), `${kind === 'insert' ? 'create' : 'update'} loans`);
      const allowed = [...permission.columns.values()];
      const presets = new Set([...permission.set.values()].map((preset) => columnOf(preset.field)));
      const problems = new Map<string, string>();
      const deny = `not among the fields the role ${role.name} may ${kind === 'insert' ? 'give when creating a loan' : 'update'} (${permissionName} columns: ${
        allowed.map((field) => field.name).join(', ') || 'none'
      })`;
      for (const column of changes.columns.keys()) {
        const writable = allowed.some((field) => field.source.kind === 'column' && field.source.column === column) && !presets.has(column);
        if (!writable) problems.set(BUILT_IN_FIELDS.find((field) => field.column === column)?.name ?? column, deny);
      }
      for (const key of changes.customFields.keys()) {
        const writable =
          !presets.has('custom_fields') &&
          allowed.some((field) => (field.source.kind === 'column' && field.source.column === 'custom_fields') || (field.source.kind === 'customField' && field.source.key === key));
        if (!writable) problems.set(product.customFields.find((field) => field.key === key)?.name ?? key, deny);
      }
      for (const contact of ['borrower', 'guarantor'] as const) {
        if (!changes.contacts[contact]) continue;
        const link = contact === 'borrower' ? 'borrows' : 'guarantees';
        const people = collections.get('people');
        const missing = [
          collections.get(link)?.insert ? null : `${link}.insert`,
          people?.insert ? null : 'people.insert',
          people?.update ? null : 'people.update',
        ].filter((name): name is string => name !== null);
        if (missing.length) problems.set(`${contact === 'borrower' ? 'Borrower' : 'Guarantor'}_*`, `attaching a ${contact} needs ${missing.join(', ')}, which the role ${role.name} lacks`);
      }
      if (problems.size) refuse(problems, `write ${[...problems.keys()].join(', ')}`);
    },
    async mayWrite(tx, loanId) {
      if (!filter) return true;
      return (await reader.forRole(role.metadata, false, new Map([['loans', filter]])).loanJson(asDatabase(tx), principal, loanId)) !== null;
    },
    async finish(tx, loanId) {
      if (!permission) return;
      for (const preset of permission.set.values()) {
        if (preset.field.source.kind !== 'column') continue;
        const value = preset.variable !== undefined ? keyVariables.get(preset.variable) : preset.value;
        // The column name comes from resolved metadata (checked against the catalogue), never from the request.
        await tx
          .query(`UPDATE loans SET ${quoteIdentifier(preset.field.source.column)} = $3::${preset.field.type} WHERE account_id = $1 AND id = $2`, [accountIdOf(principal), loanId, value])
          .catch((error: { code?: string; message?: string }) => {
            // A preset the database's rules refuse (SPEC §12 R9: closing while money is owed) is the request's 400, not a fault.
            if (error.code === '23514') throw new UserInputError(`the role ${role.name} presets ${preset.field.name}, which this loan refuses: ${error.message}`, 400, new Map([[preset.field.name, String(error.message)]]));
            throw error;
          });
      }
      if (!check) return;
      const passes = (await reader.forRole(role.metadata, false, new Map([['loans', check]])).loanJson(asDatabase(tx), principal, loanId)) !== null;
      if (!passes) {
        throw new PermissionRefused(
          `the loan as written would not satisfy the ${kind} check of the role ${role.name}; nothing was written`,
          role.name,
          `${permissionName}.check`,
          new Map(),
        );
      }
    },
  };
}

function columnOf(field: Field): string {
  return field.source.column;
}

function accountIdOf(principal: Principal): string {
  return typeof principal === 'string' ? principal : principal.accountId;
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
