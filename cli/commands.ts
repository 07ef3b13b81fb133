import { accessSync, constants, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { userInfo } from 'node:os';
import { BackupFileError, checkBackupFileAt, knownMigrations, migrate, restoreBackupFile, RestoreRefusedError, writeBackupFile, type Database } from '../db/index.js';
import { checkAccountSettingsText, checkAccountSlug, checkAdminCredentials, createAccount, createAdmin, findAccount, updateAccount, type AccountSettings } from '../app/accounts.js';
import { UserInputError } from '../app/errors.js';
import { CUSTOM_FIELD_TYPES, type CustomFieldType } from '../app/customFieldTypes.js';
import type { FeeJobRun } from '../app/feeJob.js';
import type { RemittanceInvestor } from '../app/remittances.js';
import { displayWidth, oneLine, padToWidth } from './terminalText.js';

/**
 * The code behind the commands, loaded when a command that needs it runs: `loanql help`, a
 * mistake on the command line and the account commands load none of the engine, the metadata's
 * parser and validator, the ledger's or the webhooks' code (`loanql --help`: 0.17 CPU-seconds,
 * 0.48 with everything loaded at start; cli/README.md).
 */
const load = {
  apiKeys: () => import('../app/apiKeys.js'),
  products: () => import('../app/products.js'),
  productSettings: () => import('../app/productSettings.js'),
  accountProfile: () => import('../app/accountProfile.js'),
  seed: () => import('../app/seed/index.js'),
  requestStatements: () => import('../app/requestStatements.js'),
  scheduleRegeneration: () => import('../app/scheduleRegeneration.js'),
  ledgerVerify: () => import('../app/ledgerVerify.js'),
  feeJob: () => import('../app/feeJob.js'),
  progress: () => import('./progress.js'),
  investorStatements: () => import('../app/investorStatements.js'),
  remittances: () => import('../app/remittances.js'),
  statementPdf: () => import('../app/statementPdf.js'),
  loanReads: () => import('../app/loanReads.js'),
  payoffLetters: () => import('../app/payoffLetters.js'),
  payoffLetterPdf: () => import('../app/payoffLetterPdf.js'),
  ledgerReads: () => import('../app/ledgerReads.js'),
  engineHolder: () => import('../app/engineHolder.js'),
  config: () => import('../app/config.js'),
  metadataFile: () => import('../app/metadataFile.js'),
  metadata: () => import('../metadata/index.js'),
  engine: () => import('../engine/index.js'),
  webhooks: () => import('../app/webhooks/index.js'),
};

/** A number as the tables print amounts and counts: `-4359.11`, `12`. */
const NUMBER = /^-?\d+(?:\.\d+)?$/;

/**
 * Rows as aligned columns, the first being the header: each cell on one line (a line break or a
 * tab in a name is shown as `\n`, `\t`: `terminalText.ts`) and padded to its column as a terminal
 * measures it, so every row is one line and each column starts at one place. A column whose cells
 * below the header are all numbers is aligned right, header too, so amounts line up on the point.
 */
function table(rows: readonly (readonly string[])[]): string {
  const cells = rows.map((row) => row.map(oneLine));
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((row) => displayWidth(row[i]!))));
  const numeric = cells[0]!.map((_, i) => cells.length > 1 && cells.slice(1).every((row) => NUMBER.test(row[i]!)));
  const pad = (cell: string, i: number) => (numeric[i] ? ' '.repeat(widths[i]! - displayWidth(cell)) + cell : padToWidth(cell, widths[i]!));
  return `${cells.map((row) => row.map(pad).join('  ').trimEnd()).join('\n')}\n`;
}

/** What was typed after a command's words. */
export interface CommandLine {
  /** The options given, by name without `--` (a `Map`: looked up by name, never through a plain object); a `multiple` option's values in order. */
  readonly args: ReadonlyMap<string, string | boolean | readonly string[]>;
  readonly positionals: readonly string[];
}

/** What a command runs with once its command line is read: the migrated database and the terminal. */
export interface CommandContext {
  readonly db: Database;
  readonly out: NodeJS.WriteStream;
  readonly err: NodeJS.WriteStream;
}

interface CommandInfo {
  readonly words: readonly string[];
  /** The command line as typed: words, then options (`[…]` when optional). */
  readonly synopsis: string;
  /** What it does, in one sentence; `loanql help` wraps it at the description column. */
  readonly description: string;
  readonly options: Readonly<Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>>;
  readonly needsDatabase: boolean;
  /**
   * The database is opened but not migrated first: `migrate` says what it applied, `backup` copies
   * the database as it is (before an upgrade, say), `restore` migrates an empty one to its backup's
   * migrations, no further. Every other command runs on a database brought up to date.
   */
  readonly takesDatabaseAsIs?: boolean;
}

/** A command as written below: `parse` reads its command line, `run` does the work with what `parse` returned. */
interface CommandSpec<Input> extends CommandInfo {
  /**
   * Reads and checks the command line — what is required, formats, choices, everything that
   * needs no database — into what `run` takes. It runs before the database is opened, so a
   * mistake is answered at once (a `UserInputError`: exit 2), never after a database start nor
   * hidden behind a database that cannot be reached.
   */
  parse(line: CommandLine): Input | Promise<Input>;
  /** Resolves with the exit status when it is not 0 (a finding, not a mistake: `ledger verify`). */
  run(context: CommandContext, input: Input): Promise<void | number>;
}

export interface Command extends CommandInfo {
  /** Reads and checks the command line (`CommandSpec.parse`); resolves with the command ready to run on the database. */
  prepare(line: CommandLine): Promise<(context: CommandContext) => Promise<void | number>>;
}

/** A command whose `run` takes exactly what its `parse` returns. */
function command<Input>(spec: CommandSpec<Input>): Command {
  const { parse, run, ...info } = spec;
  return {
    ...info,
    async prepare(line) {
      const input = await parse(line);
      return (context) => run(context, input);
    },
  };
}

/** A backup or restore the file or the database refuses is the user's to fix: exit 2, one line. */
async function refusalsAsInput<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof BackupFileError || error instanceof RestoreRefusedError) throw new UserInputError(error.message);
    throw error;
  }
}

/** The `parse` of a command that takes no arguments but its options. */
function noArguments(line: CommandLine): undefined {
  atMostPositionals(line, 0);
  return undefined;
}

/** Refuses arguments beyond the `count` a command takes (not echoed: a stray word may be a secret). */
function atMostPositionals(line: CommandLine, count: number): void {
  if (line.positionals.length > count) {
    const takes = count === 0 ? 'no arguments besides its options' : count === 1 ? 'one argument' : `${count} arguments`;
    throw new UserInputError(`too many arguments: this command takes ${takes}, not ${line.positionals.length} (\`loanql help\` shows its synopsis)`);
  }
}

function required(line: CommandLine, name: string): string {
  const value = line.args.get(name);
  if (typeof value !== 'string' || value === '') throw new UserInputError(`--${name} is required`);
  return value;
}

/** The most a password file may hold: a password is a line, not a document. */
const PASSWORD_FILE_MAX_BYTES = 4096;

/**
 * `--password P` or `--password-file FILE` (exactly one): the file's text without its one line
 * ending (what `echo`, `printf '%s\n'` and editors leave), read before the database is opened.
 */
function passwordOf(line: CommandLine): string {
  const given = optionText(line, 'password');
  const file = optionText(line, 'password-file');
  if (given !== undefined && file !== undefined) throw new UserInputError('give --password or --password-file, not both');
  if (file === undefined) return required(line, 'password');
  if (file === '') throw new UserInputError('--password-file needs a file name (/dev/stdin to read a pipe)');
  let text: string;
  try {
    const bytes = readFileSync(file);
    if (bytes.length > PASSWORD_FILE_MAX_BYTES) throw new UserInputError(`--password-file ${file}: more than ${PASSWORD_FILE_MAX_BYTES} bytes; a password file holds one line`);
    text = bytes.toString('utf8');
  } catch (error) {
    if (error instanceof UserInputError) throw error;
    throw new UserInputError(`--password-file ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const password = text.replace(/\r?\n$/, '');
  if (/[\r\n]/.test(password)) throw new UserInputError(`--password-file ${file}: holds more than one line; a password file holds the password alone`);
  if (password === '') throw new UserInputError(`--password-file ${file} is empty`);
  return password;
}

/** A string option, or undefined when not given. */
function optionText(line: CommandLine, name: string): string | undefined {
  const value = line.args.get(name);
  return typeof value === 'string' ? value : undefined;
}

/** `--account SLUG` where it is optional (every account without it); given, it must name one. */
function optionalAccount(line: CommandLine): string | undefined {
  const slug = line.args.get('account');
  if (slug === undefined) return undefined;
  if (typeof slug !== 'string' || slug === '') throw new UserInputError('--account needs a slug');
  return slug;
}

/** `--currency` and `--timezone`, where given. */
function accountSettingsOf(line: CommandLine): Omit<AccountSettings, 'name'> {
  const currency = optionText(line, 'currency');
  const timezone = optionText(line, 'timezone');
  return { ...(currency !== undefined ? { currency } : {}), ...(timezone !== undefined ? { timezone } : {}) };
}

/** The positional at `index`, required (`what` names it in the refusal); `count` is how many the command takes. */
function positional(line: CommandLine, index: number, what: string, count = index + 1): string {
  atMostPositionals(line, count);
  const value = line.positionals[index];
  if (!value) throw new UserInputError(`${what} is required`);
  return value;
}

function number(line: CommandLine, name: string, fallback: number): number {
  const raw = line.args.get(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (typeof raw !== 'string' || !Number.isFinite(value) || value < 0) throw new UserInputError(`--${name} must be a non-negative number`);
  return value;
}

/**
 * `--limit N`: a whole number from 1 to `max` (`fallback` when not given). Anything else is
 * refused, not bent into the range: 0 once showed one row, 2.5 two, 5000 a thousand.
 */
function limitOption(line: CommandLine, fallback: number, max: number): number {
  const raw = line.args.get('limit');
  if (raw === undefined) return fallback;
  const value = typeof raw === 'string' && /^\d{1,7}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!(value >= 1 && value <= max)) throw new UserInputError(`--limit must be a whole number from 1 to ${max}, not ${JSON.stringify(raw)}`);
  return value;
}

/**
 * Refuses an id that is not a uuid, which names no record, with the sentence `run` says of a record
 * the account lacks (`refusal`), before the database is opened: it was answered only after.
 */
async function refuseMalformedId(id: string, refusal: string, status: 400 | 404 = 400): Promise<void> {
  const { isUuid } = await load.investorStatements();
  if (!isUuid(id)) throw new UserInputError(refusal, status);
}

/** A GraphQL request's refusal as `loanql sql` words it: `code: message`, a line each. */
function requestErrorsText(error: { readonly errors: readonly { readonly message: string; readonly extensions: { readonly code: string } }[] }): string {
  return error.errors.map((e) => `${e.extensions.code}: ${e.message}`).join('\n');
}

/** A day option (`--today`, `--as-of`) as YYYY-MM-DD, checked as the REST routes check theirs; undefined when not given. */
async function dayOption(line: CommandLine, name: string): Promise<string | undefined> {
  const value = optionText(line, name);
  if (value === undefined) return undefined;
  const { dayParameter } = await load.ledgerReads();
  return dayParameter(`--${name}`, value) ?? undefined;
}

/** Writes a command's output to `--out FILE` (saying so), or to stdout without one; a path that cannot be written is the person's mistake (exit 2). */
function writtenTo(context: CommandContext, out: string | undefined, content: string | Buffer, what: string): void {
  if (!out) return void context.out.write(content);
  try {
    writeFileSync(out, content);
  } catch (error) {
    // The path is the person's at the terminal: a directory, a folder that does not exist, no permission.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined || !['EISDIR', 'ENOENT', 'ENOTDIR', 'EACCES', 'EPERM', 'EROFS'].includes(code)) throw error;
    throw new UserInputError(`--out ${out}: cannot write the ${what} there (${code === 'EISDIR' ? 'it is a directory' : code === 'ENOENT' || code === 'ENOTDIR' ? 'no such directory' : 'not allowed'})`);
  }
  context.out.write(`${what} written to ${out}\n`);
}

/**
 * Refuses a FILE whose folder cannot take it (none there, not a folder, not writable), as a mistake
 * before the database is opened: `backup --out /no/such/dir/x.gz` answered exit 1 with the
 * temporary file's ENOENT after the database was opened.
 */
function checkWritableFolder(option: string, file: string): void {
  const folder = dirname(resolve(file));
  let problem: string | null = null;
  try {
    if (!statSync(folder).isDirectory()) problem = 'not a directory';
    else accessSync(folder, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    problem = code === 'ENOENT' || code === 'ENOTDIR' ? 'no such directory' : 'not allowed';
  }
  if (problem) throw new UserInputError(`${option} ${file}: cannot write a file in ${folder} (${problem})`);
}

/** `--from` and `--to`: a statement's or a remittance's period. */
async function periodOf(line: CommandLine): Promise<{ from: string; to: string }> {
  const { statementPeriod } = await load.investorStatements();
  return statementPeriod(optionText(line, 'from'), optionText(line, 'to'));
}

/**
 * `remittance mark`'s `--total` and `--lines` (the run's Total line as shown): both or neither,
 * checked here, before the database is opened, in the options' names (the body of
 * `POST /api/remittances` names them `total` and `line_count`).
 */
async function runShownOptions(line: CommandLine): Promise<{ total?: string; line_count?: string }> {
  const total = optionText(line, 'total');
  const lines = optionText(line, 'lines');
  if (total === undefined && lines === undefined) return {};
  if (total === undefined) throw new UserInputError("--total is required with --lines: give both, as the run's Total line shows them, or neither");
  if (lines === undefined) throw new UserInputError("--lines is required with --total: give both, as the run's Total line shows them, or neither");
  const { SHOWN_TOTAL } = await load.remittances();
  if (!SHOWN_TOTAL.test(total)) throw new UserInputError(`--total must be an amount in cents such as 1234.56, not ${JSON.stringify(total)}`);
  if (!/^\d{1,9}$/.test(lines)) throw new UserInputError(`--lines must be a whole number of lines, 0 or more, not ${JSON.stringify(lines)}`);
  return { total, line_count: lines };
}

/** A `--default` given on the command line, read as the field's type expects. */
function defaultFromText(type: CustomFieldType, text: string): unknown {
  if (type === 'integer' && /^-?\d+$/.test(text)) return Number(text);
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/** `fees assess` (and its old name, `ledger refresh`): the daily fee job now, for one account or all. */
const assessFeesCommand = {
  options: { account: { type: 'string' }, 'as-of': { type: 'string' } },
  needsDatabase: true,
  async parse(line: CommandLine): Promise<{ accountSlug?: string; asOf?: string }> {
    atMostPositionals(line, 0);
    const accountSlug = optionalAccount(line);
    const asOf = await dayOption(line, 'as-of');
    return { ...(accountSlug !== undefined ? { accountSlug } : {}), ...(asOf !== undefined ? { asOf } : {}) };
  },
  async run(context: CommandContext, options: { accountSlug?: string; asOf?: string }): Promise<void> {
    const { assessFees } = await load.feeJob();
    for (const run of await assessFees(context.db, options)) context.out.write(`${describeFeeJobRun(run)}\n`);
  },
} as const;

export const COMMANDS: Command[] = [
  command({
    words: ['migrate'],
    synopsis: 'migrate',
    description: 'bring the database schema up to date, naming the migrations applied',
    options: {},
    needsDatabase: true,
    takesDatabaseAsIs: true,
    parse: noArguments,
    async run({ db, out }) {
      const applied = await migrate(db);
      if (!applied.length) out.write(`database schema is up to date: no migration was pending (the last is ${knownMigrations().at(-1)})\n`);
      else out.write(`applied ${applied.length} migration${applied.length === 1 ? '' : 's'}: ${applied.join(', ')}\ndatabase schema is up to date\n`);
    },
  }),
  command({
    words: ['backup'],
    synopsis: 'backup --out FILE',
    description:
      "write every table to a new gzipped FILE from one consistent snapshot, while the service runs (the embedded database's requests wait while it reads); FILE holds the lender's data and secrets as stored: keep it private",
    options: { out: { type: 'string' } },
    needsDatabase: true,
    takesDatabaseAsIs: true,
    parse(line) {
      atMostPositionals(line, 0);
      const out = required(line, 'out');
      if (existsSync(out)) throw new UserInputError(`--out ${out} exists: a backup never overwrites a file; give another name`);
      checkWritableFolder('--out', out);
      return out;
    },
    async run({ db, out }, file) {
      const written = await refusalsAsInput(writeBackupFile(db, file));
      out.write(
        `backup written to ${file}: ${written.tables} tables, ${written.rows} rows, ${written.bytes} bytes; ` +
          `migrations up to ${written.header.lastMigration}, taken at ${written.header.takenAt} (PostgreSQL ${written.header.postgres})\n`,
      );
    },
  }),
  command({
    words: ['restore'],
    synopsis: 'restore --in FILE',
    description:
      "load a backup into an empty database (a new DATA_DIR or PostgreSQL database) in one transaction, migrated to the backup's migrations, then to this version's; a damaged file, a database with accounts or a backup from a newer version is refused, nothing written",
    options: { in: { type: 'string' } },
    needsDatabase: true,
    takesDatabaseAsIs: true,
    async parse(line) {
      atMostPositionals(line, 0);
      const file = required(line, 'in');
      // The whole file is read once before the database is opened (or a new DATA_DIR made).
      await refusalsAsInput(checkBackupFileAt(file));
      return file;
    },
    async run({ db, out }, file) {
      const restored = await refusalsAsInput(restoreBackupFile(db, file));
      const after = restored.migratedAfter.length ? `; then applied ${restored.migratedAfter.length} later migration${restored.migratedAfter.length === 1 ? '' : 's'}, to ${restored.migratedAfter.at(-1)}` : '';
      out.write(`restored ${restored.rows} rows in ${restored.tables} tables from ${file} (taken at ${restored.header.takenAt}, migrations up to ${restored.header.lastMigration})${after}\n`);
    },
  }),
  command({
    words: ['account', 'create'],
    synopsis: 'account create <slug> [--name NAME] [--currency CODE] [--timezone ZONE]',
    description: 'create an account (currency ISO 4217, default USD; time zone IANA, default UTC: the business date is a day there)',
    options: { name: { type: 'string' }, currency: { type: 'string' }, timezone: { type: 'string' } },
    needsDatabase: true,
    parse(line) {
      const slug = checkAccountSlug(positional(line, 0, 'the account slug'));
      const name = optionText(line, 'name');
      const settings = accountSettingsOf(line);
      checkAccountSettingsText({ ...settings, ...(name !== undefined ? { name } : {}) });
      return { slug, name, settings };
    },
    async run(context, { slug, name, settings }) {
      const account = await createAccount(context.db, slug, name, settings);
      context.out.write(`account ${account.slug} created (${account.id}), currency ${account.currency}, time zone ${account.timezone}\n`);
    },
  }),
  command({
    words: ['account', 'set'],
    synopsis: 'account set <slug> [--name NAME] [--currency CODE] [--timezone ZONE]',
    description: "change an account's name, currency or time zone",
    options: { name: { type: 'string' }, currency: { type: 'string' }, timezone: { type: 'string' } },
    needsDatabase: true,
    parse(line) {
      const slug = positional(line, 0, 'the account slug');
      const name = optionText(line, 'name');
      const settings: AccountSettings = { ...accountSettingsOf(line), ...(name !== undefined ? { name } : {}) };
      if (!Object.keys(settings).length) throw new UserInputError('give at least one of --name, --currency, --timezone');
      checkAccountSettingsText(settings);
      return { slug, settings };
    },
    async run(context, { slug, settings }) {
      const account = await updateAccount(context.db, slug, settings);
      context.out.write(`account ${account.slug}: name ${JSON.stringify(account.name)}, currency ${account.currency}, time zone ${account.timezone}\n`);
    },
  }),
  command({
    words: ['account', 'profile'],
    synopsis: 'account profile --account SLUG [NAME=VALUE ...]',
    description:
      "the lender's profile, the letterhead of its payoff letters and investor statements (legal name, address, phone, e-mail, payment instructions); NAME=VALUE changes fields (an empty value clears one)",
    options: { account: { type: 'string' } },
    needsDatabase: true,
    async parse(line) {
      const slug = required(line, 'account');
      const changes = new Map<string, string>();
      for (const pair of line.positionals) {
        const equals = pair.indexOf('=');
        if (equals < 1) throw new UserInputError(`"${pair}" is not NAME=VALUE`);
        changes.set(pair.slice(0, equals), pair.slice(equals + 1));
      }
      // The rules of PATCH /api/account, before the database is opened.
      if (changes.size) (await load.accountProfile()).checkProfileChange(changes);
      return { slug, changes };
    },
    async run(context, { slug, changes }) {
      const account = await findAccount(context.db, slug);
      const { PROFILE_FIELDS, readAccountProfile, updateAccountProfile } = await load.accountProfile();
      if (changes.size) {
        const updated = await updateAccountProfile(context.db, account.id, changes);
        context.out.write(updated.changed.length ? `changed on ${account.slug}: ${updated.changed.join(', ')}\n` : `the profile of ${account.slug} already had these values; nothing changed\n`);
      }
      const { profile } = await readAccountProfile(context.db, account.id);
      context.out.write(table([['FIELD', 'VALUE'], ...PROFILE_FIELDS.map((field) => [field.name, profile[field.name] ?? (field.name === 'legal_name' ? `none (letters print "${account.name}")` : 'none')])]));
    },
  }),
  command({
    words: ['admin', 'create'],
    synopsis: 'admin create --account SLUG --email E (--password P | --password-file FILE) [--name NAME]',
    description:
      'create a dashboard admin of the account (log-in e-mail and password); --password-file reads the password from a file (its one line; /dev/stdin for a pipe), so it shows in no process list or shell history',
    options: { account: { type: 'string' }, email: { type: 'string' }, password: { type: 'string' }, 'password-file': { type: 'string' }, name: { type: 'string' } },
    needsDatabase: true,
    parse(line) {
      atMostPositionals(line, 0);
      const slug = required(line, 'account');
      const name = optionText(line, 'name');
      const admin = checkAdminCredentials({ email: required(line, 'email'), password: passwordOf(line), ...(name !== undefined ? { name } : {}) });
      return { slug, admin };
    },
    async run(context, { slug, admin: input }) {
      const account = await findAccount(context.db, slug);
      const admin = await createAdmin(context.db, account.id, input);
      context.out.write(`admin ${admin.email} created for account ${account.slug}\n`);
    },
  }),
  command({
    words: ['key', 'create'],
    synopsis: 'key create --account SLUG [--name NAME] [--role ROLE] [--var NAME=VALUE …]',
    description: 'create an API key (alone on the last line); the role (default admin) is one of the metadata, with each of its variables (--var person_id=<uuid>)',
    options: { account: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' }, var: { type: 'string', multiple: true } },
    needsDatabase: true,
    async parse(line) {
      atMostPositionals(line, 0);
      const slug = required(line, 'account');
      const { checkKeyName } = await load.apiKeys();
      const name = checkKeyName(optionText(line, 'name') ?? `cli key ${new Date().toISOString().slice(0, 10)}`);
      const variables = new Map<string, string>();
      const given = line.args.get('var');
      for (const pair of Array.isArray(given) ? given : typeof given === 'string' ? [given] : []) {
        const at = pair.indexOf('=');
        if (at < 1) throw new UserInputError(`--var ${pair}: write NAME=VALUE`);
        if (variables.has(pair.slice(0, at))) throw new UserInputError(`--var ${pair.slice(0, at)}: given twice`);
        variables.set(pair.slice(0, at), pair.slice(at + 1));
      }
      // The role and its variables against the metadata file's roles, before the database is
      // opened: `--role nosuch` was answered only after it (the metadata file is read the same way
      // the service reads it, made from the shipped default when missing).
      const [{ ADMIN_ROLE, loadMetadataFile, MetadataError }, { metadataFileSettingsFromEnv, metadataFileOf }, { checkKeyRoleShape }] = await Promise.all([load.metadata(), load.metadataFile(), load.apiKeys()]);
      const role = optionText(line, 'role') ?? ADMIN_ROLE;
      let behindShipped = '';
      let roles;
      try {
        const behind = (path: string, section: string, names: readonly string[]): void => {
          if (section === 'roles' && names.includes(role)) behindShipped = `; ${path} has no role "${role}", which the shipped default defines: copy it from metadata/loanql.default.yaml (the file was made from an older version)`;
        };
        roles = loadMetadataFile(metadataFileOf(metadataFileSettingsFromEnv(), undefined, undefined, behind)).roles;
      } catch (error) {
        if (error instanceof MetadataError) throw new UserInputError(error.message);
        throw error;
      }
      try {
        return { slug, name, keyRole: checkKeyRoleShape(roles, role, variables) };
      } catch (error) {
        if (error instanceof UserInputError) throw new UserInputError(`${error.message}${behindShipped}`);
        throw error;
      }
    },
    async run(context, { slug, name, keyRole: shaped }) {
      const account = await findAccount(context.db, slug);
      const { checkKeyPerson, createApiKey } = await load.apiKeys();
      // A person_id names a person of the account: only the database knows.
      const keyRole = await checkKeyPerson(context.db, account.id, shaped);
      const key = await createApiKey(context.db, account.id, name, keyRole);
      context.out.write(`key "${oneLine(key.name)}" (role ${key.role}) created for account ${account.slug}, prefix ${key.prefix}. It is shown only now:\n${key.key}\n`);
    },
  }),
  command({
    words: ['key', 'list'],
    synopsis: 'key list [--account SLUG]',
    description: 'list keys: prefix, account, name, role (and its variables), created, last used, active',
    options: { account: { type: 'string' } },
    needsDatabase: true,
    parse(line) {
      atMostPositionals(line, 0);
      return optionalAccount(line);
    },
    async run(context, slug) {
      const accountId = slug !== undefined ? (await findAccount(context.db, slug)).id : undefined;
      const { listApiKeys } = await load.apiKeys();
      const keys = await listApiKeys(context.db, accountId);
      const roleOf = (k: (typeof keys)[number]): string => {
        const variables = Object.entries(k.variables).map(([name, value]) => `${name}=${value}`);
        return variables.length ? `${k.role} (${variables.join(', ')})` : k.role;
      };
      const rows = [['PREFIX', 'ACCOUNT', 'NAME', 'ROLE', 'CREATED', 'LAST USED', 'ACTIVE']].concat(
        keys.map((k) => [k.prefix, k.accountSlug, k.name, roleOf(k), k.createdAt.slice(0, 19), k.lastUsedAt?.slice(0, 19) ?? '-', k.active ? 'yes' : 'no']),
      );
      context.out.write(table(rows));
    },
  }),
  command({
    words: ['key', 'revoke'],
    synopsis: 'key revoke <prefix>',
    description: 'deactivate a key (refused from its next request)',
    options: {},
    needsDatabase: true,
    async parse(line) {
      const prefix = positional(line, 0, 'the key prefix (lq_xxxxxxxx)');
      const { isKeyPrefix, prefixOfKey } = await load.apiKeys();
      // Never echoed unless it is a prefix: what was typed may be a whole key, secret and all.
      if (!isKeyPrefix(prefix)) {
        const whole = prefixOfKey(prefix);
        throw new UserInputError(whole ? `that is a whole key: give only its prefix, ${whole} (the key's secret is never needed here)` : 'expected a key prefix: lq_ and 8 lower-case letters or digits, as key list shows it', 400);
      }
      return prefix;
    },
    async run(context, prefix) {
      const { deactivateApiKey } = await load.apiKeys();
      const done = await deactivateApiKey(context.db, prefix);
      if (!done) throw new UserInputError(`no key with prefix ${prefix}`, 404);
      // Nothing to do is not a mistake (exit 0, as fees assess of a day already assessed).
      if (!done.wasActive) return void context.out.write(`key ${prefix} was already revoked${done.deactivatedAt ? ` (${done.deactivatedAt.slice(0, 19)})` : ''}; nothing changed\n`);
      context.out.write(`key ${prefix} deactivated; it is refused from its next request on\n`);
    },
  }),
  command({
    words: ['product', 'field', 'add'],
    synopsis: 'product field add --account SLUG --name NAME --type TYPE [--options a,b,c] [--required] [--default VALUE]',
    description: 'add a custom field to the default product (TYPE: ' + CUSTOM_FIELD_TYPES.join(' ') + ')',
    options: { account: { type: 'string' }, name: { type: 'string' }, type: { type: 'string' }, options: { type: 'string' }, required: { type: 'boolean' }, default: { type: 'string' } },
    needsDatabase: true,
    async parse(line) {
      atMostPositionals(line, 0);
      const slug = required(line, 'account');
      const type = required(line, 'type') as CustomFieldType;
      if (!CUSTOM_FIELD_TYPES.includes(type)) throw new UserInputError(`--type must be one of ${CUSTOM_FIELD_TYPES.join(', ')}`);
      const options = optionText(line, 'options')?.split(',');
      const rawDefault = line.args.get('default');
      const definition = {
        name: required(line, 'name'),
        type,
        ...(options ? { options } : {}),
        required: line.args.get('required') === true,
        ...(typeof rawDefault === 'string' ? { defaultValue: defaultFromText(type, rawDefault) } : {}),
      };
      const { checkCustomFieldDefinition } = await load.products();
      checkCustomFieldDefinition(definition);
      return { slug, definition };
    },
    async run(context, { slug, definition }) {
      const account = await findAccount(context.db, slug);
      const { addProductField, bodyName, metadataTypeFor } = await load.products();
      const field = await addProductField(context.db, account.id, definition);
      context.out.write(
        `field "${field.name}" (${field.type}${field.required ? ', required' : ''}) added to the default product of ${account.slug}; ` +
          `send it as ${bodyName(field.name)} in POST/PATCH /api/loan\n` +
          `to query it through /api/graph, add under collections.loans.fields of the metadata file:\n` +
          `  ${field.key}: { type: ${metadataTypeFor(field.type)}, custom_field: ${field.key} }\n`,
      );
    },
  }),
  command({
    words: ['product', 'field', 'list'],
    synopsis: 'product field list --account SLUG',
    description: 'the default product: built-in and custom fields, as request bodies name them',
    options: { account: { type: 'string' } },
    needsDatabase: true,
    parse(line) {
      atMostPositionals(line, 0);
      return required(line, 'account');
    },
    async run(context, slug) {
      const account = await findAccount(context.db, slug);
      const { loadDefaultProduct, productFieldListing } = await load.products();
      const product = await loadDefaultProduct(context.db, account.id);
      const rows = [['BODY KEY', 'TYPE', 'REQUIRED', 'DEFAULT', 'OPTIONS', 'STORED IN']].concat(
        productFieldListing(product).map((field) => [
          field.bodyKey,
          field.type,
          field.required ? 'yes' : 'no',
          field.defaultValue === null ? '-' : field.custom ? JSON.stringify(field.defaultValue) : String(field.defaultValue),
          field.options?.join(',') ?? '-',
          field.storedIn,
        ]),
      );
      context.out.write(table(rows));
    },
  }),
  command({
    words: ['product', 'field', 'remove'],
    synopsis: 'product field remove --account SLUG --name NAME',
    description: 'remove a custom field (values stored in loans are kept)',
    options: { account: { type: 'string' }, name: { type: 'string' } },
    needsDatabase: true,
    parse(line) {
      atMostPositionals(line, 0);
      return { slug: required(line, 'account'), name: required(line, 'name') };
    },
    async run(context, { slug, name }) {
      const account = await findAccount(context.db, slug);
      const { removeProductField } = await load.products();
      if (!(await removeProductField(context.db, account.id, name))) throw new UserInputError(`the default product of ${account.slug} has no custom field "${name}"`, 404);
      context.out.write(`field "${name}" removed from the default product of ${account.slug}; values already stored in loans are kept\n`);
    },
  }),
  command({
    words: ['product', 'settings'],
    synopsis: 'product settings --account SLUG',
    description: "the default product's servicing settings (SPEC §12): each one's value and default",
    options: { account: { type: 'string' } },
    needsDatabase: true,
    parse(line) {
      atMostPositionals(line, 0);
      return required(line, 'account');
    },
    async run(context, slug) {
      const account = await findAccount(context.db, slug);
      const { PRODUCT_SETTINGS, readProductSettings, settingText } = await load.productSettings();
      const { settings } = await readProductSettings(context.db, account.id);
      const shown = (value: Parameters<typeof settingText>[0]) => (value === null ? 'none' : settingText(value));
      context.out.write(table([['SETTING', 'VALUE', 'DEFAULT'], ...PRODUCT_SETTINGS.map((setting) => [setting.name, shown(settings.get(setting.name)!), shown(setting.default)])]));
    },
  }),
  command({
    words: ['product', 'set'],
    synopsis: 'product set --account SLUG NAME=VALUE [NAME=VALUE ...]',
    description:
      'change servicing settings of the default product in one transaction, replaying its loans (none or an empty value clears one; buckets as "name: from, name: from")',
    options: { account: { type: 'string' } },
    needsDatabase: true,
    async parse(line) {
      const slug = required(line, 'account');
      if (!line.positionals.length) throw new UserInputError('give at least one NAME=VALUE (`loanql product settings` lists the settings)');
      const changes = new Map<string, string>();
      for (const pair of line.positionals) {
        const equals = pair.indexOf('=');
        if (equals < 1) throw new UserInputError(`"${pair}" is not NAME=VALUE`);
        changes.set(pair.slice(0, equals), pair.slice(equals + 1));
      }
      // Each setting's name and value; the rules between settings need the stored ones.
      const { checkSettingChanges } = await load.productSettings();
      checkSettingChanges(changes, { valuesAre: 'text' });
      return { slug, changes };
    },
    async run(context, { slug, changes }) {
      const account = await findAccount(context.db, slug);
      const { settingText, updateProductSettings } = await load.productSettings();
      const updated = await updateProductSettings(context.db, account.id, changes, { valuesAre: 'text' });
      if (!updated.changed.length) return void context.out.write(`the settings of the default product of ${account.slug} already had these values; nothing changed\n`);
      const lines = updated.changed.map((name) => `  ${name} = ${settingText(updated.settings.get(name)!) || 'none'}`);
      context.out.write(`changed on the default product of ${account.slug}:\n${lines.join('\n')}\n${updated.replayedLoans} loan${updated.replayedLoans === 1 ? '' : 's'} replayed\n`);
    },
  }),
  command({
    words: ['seed'],
    synopsis: 'seed --account SLUG [--scale N] [--seed S] [--today YYYY-MM-DD]',
    description: 'load a deterministic demo portfolio dated around --today (default: today, UTC)',
    options: { account: { type: 'string' }, scale: { type: 'string' }, seed: { type: 'string' }, today: { type: 'string' } },
    needsDatabase: true,
    async parse(line) {
      atMostPositionals(line, 0);
      const slug = required(line, 'account');
      // Not `number()`: its "non-negative number" would invite a 0 this refuses; one sentence for every bad scale.
      const rawScale = line.args.get('scale');
      const scale = rawScale === undefined ? 1 : typeof rawScale === 'string' ? Number(rawScale) : NaN;
      const { MAX_SEED_SCALE } = await load.seed();
      // Above it the plan outgrows memory and the command never ends (app/seed/generate.ts).
      if (!(scale > 0 && scale <= MAX_SEED_SCALE)) throw new UserInputError(`--scale must be a number above 0 and at most ${MAX_SEED_SCALE} (${(MAX_SEED_SCALE * 10_000).toLocaleString('en-US')} loans)`);
      const seed = number(line, 'seed', 1);
      if (!Number.isSafeInteger(seed)) throw new UserInputError(`--seed must be an integer, not ${seed}`);
      const today = (await dayOption(line, 'today')) ?? new Date().toISOString().slice(0, 10);
      const { isSeedDay, SEED_DAYS } = await load.seed();
      // Four years of history before it and thirty-year loans after it, all in 1900–2999 (app/seed/generate.ts).
      if (!isSeedDay(today)) throw new UserInputError(`--today must be from ${SEED_DAYS.first} to ${SEED_DAYS.last}: the portfolio's payments run four years before it and its loans up to thirty years after`);
      return { slug, options: { scale, seed, today } };
    },
    async run(context, { slug, options }) {
      const account = await findAccount(context.db, slug);
      const [{ progressReporter }, { SeedError, seedExistingAccount }] = await Promise.all([load.progress(), load.seed()]);
      const progress = progressReporter(context.err);
      let summary: Awaited<ReturnType<typeof seedExistingAccount>>;
      try {
        summary = await seedExistingAccount(context.db, account.id, { ...options, onProgress: progress.update });
      } catch (error) {
        // The seeder knows the account by id; the person at the terminal named it by slug.
        if (error instanceof SeedError && error.reason === 'account-not-empty') {
          throw new UserInputError(`account ${account.slug} already has loans or people; seed an empty account`, 409);
        }
        if (error instanceof SeedError) throw new UserInputError(error.message);
        throw error;
      } finally {
        progress.stop();
      }
      const { ms, ...counts } = summary;
      context.out.write(`seeded account ${account.slug} in ${(ms / 1000).toFixed(1)} s: ${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ')}\n`);
    },
  }),
  command({
    words: ['schedules', 'regenerate'],
    synopsis: 'schedules regenerate [--account SLUG] [--dry-run]',
    description: 'rebuild schedules that differ from the current rules (SPEC §7)',
    options: { account: { type: 'string' }, 'dry-run': { type: 'boolean' } },
    needsDatabase: true,
    parse(line) {
      atMostPositionals(line, 0);
      return { slug: optionalAccount(line), dryRun: line.args.get('dry-run') === true };
    },
    async run(context, { slug, dryRun }) {
      const account = slug !== undefined ? await findAccount(context.db, slug) : null;
      const { regenerateSchedules } = await load.scheduleRegeneration();
      const report = await regenerateSchedules(context.db, { ...(account ? { accountId: account.id } : {}), dryRun });
      for (const { loanId, reason } of report.refused) context.out.write(`left as it is: loan ${loanId}: ${reason}\n`);
      const scope = account ? `account ${account.slug}` : 'all accounts';
      context.out.write(
        `${report.checked} loans checked (${scope}), ${report.refused.length} left as they are; ` +
          (dryRun ? `${report.changed} would change (dry run: nothing written)\n` : `${report.changed} changed\n`),
      );
    },
  }),
  command({
    words: ['ledger', 'verify'],
    synopsis: 'ledger verify [--account SLUG]',
    description: "replay every loan's ledger (SPEC §12) and list each stored value that differs (allocations, balances, status, schedule rows, fees); exit 1 when any does",
    options: { account: { type: 'string' } },
    needsDatabase: true,
    parse(line) {
      atMostPositionals(line, 0);
      return optionalAccount(line);
    },
    async run(context, slug) {
      const account = slug !== undefined ? await findAccount(context.db, slug) : null;
      const { verifyLedgers } = await load.ledgerVerify();
      const report = await verifyLedgers(context.db, account ? { accountId: account.id } : {});
      const shown = 20;
      for (const loan of report.differing) {
        const name = loan.loanName ? ` "${oneLine(loan.loanName)}"` : '';
        context.out.write(`loan ${loan.loanId}${name} (account ${loan.accountSlug}): ${loan.differences.length} stored value${loan.differences.length === 1 ? '' : 's'} differ${loan.differences.length === 1 ? 's' : ''}\n`);
        for (const d of loan.differences.slice(0, shown)) context.out.write(`  ${d.what}: stored ${d.stored ?? '(none)'}, replay ${d.replay ?? '(none)'}\n`);
        if (loan.differences.length > shown) context.out.write(`  … and ${loan.differences.length - shown} more\n`);
      }
      const scope = account ? `account ${account.slug}` : 'all accounts';
      const n = report.differing.length;
      context.out.write(
        `${report.checked} loans checked (${scope}): ${n === 0 ? '0 differences' : `${n} loan${n === 1 ? '' : 's'} differ${n === 1 ? 's' : ''} from a fresh replay; \`loanql ledger rebuild\` rewrites them`}\n`,
      );
      return n === 0 ? 0 : 1;
    },
  }),
  command({
    words: ['ledger', 'rebuild'],
    synopsis: 'ledger rebuild [--account SLUG]',
    description: "replay every loan's ledger and store it (500 loans per transaction)",
    options: { account: { type: 'string' } },
    needsDatabase: true,
    parse(line) {
      atMostPositionals(line, 0);
      return optionalAccount(line);
    },
    async run(context, slug) {
      const account = slug !== undefined ? await findAccount(context.db, slug) : null;
      const { rebuildLedgers } = await load.ledgerVerify();
      const report = await rebuildLedgers(context.db, account ? { accountId: account.id } : {});
      const scope = account ? `account ${account.slug}` : 'all accounts';
      context.out.write(`${report.replayed} loans replayed (${scope}) in ${report.batches} transaction${report.batches === 1 ? '' : 's'}\n`);
    },
  }),
  command({
    words: ['fees', 'assess'],
    synopsis: 'fees assess [--account SLUG] [--as-of DATE]',
    description: "run the daily fee job now: bring every serviced loan to its account's business date (or DATE, not later), assessing late fees and delinquency; a day already done is not run again",
    ...assessFeesCommand,
  }),
  command({
    words: ['ledger', 'refresh'],
    synopsis: 'ledger refresh [--account SLUG] [--as-of DATE]',
    description: 'the same as `fees assess`, options and all (kept for scripts written before it)',
    ...assessFeesCommand,
  }),
  command({
    words: ['sql'],
    synopsis: "sql '<graphql>' [--variables JSON] [--operation-name NAME] [--account SLUG]",
    description: 'print the one SQL statement, its parameters and its plan (the demo account by default; --operation-name picks the operation of a document with several)',
    options: { variables: { type: 'string' }, account: { type: 'string' }, 'operation-name': { type: 'string' } },
    needsDatabase: true,
    async parse(line) {
      const query = positional(line, 0, 'the GraphQL query');
      const operationName = optionText(line, 'operation-name');
      // The document's syntax (and its size as written) and the operation --operation-name picks
      // need no schema nor database: a '{bad', or a NAME the document does not define, was
      // answered only after the database was opened, the demo account looked up and the engine built.
      const { chooseOperation, parseDocumentText, RequestError } = await load.engine();
      try {
        chooseOperation(parseDocumentText(query, {}), operationName);
      } catch (error) {
        if (error instanceof RequestError) throw new UserInputError(requestErrorsText(error));
        throw error;
      }
      let variables: unknown;
      try {
        const text = optionText(line, 'variables');
        variables = text !== undefined ? JSON.parse(text) : undefined;
      } catch {
        variables = null;
      }
      if (variables !== undefined && (variables === null || typeof variables !== 'object' || Array.isArray(variables))) throw new UserInputError('--variables must be a JSON object');
      return { request: { query, variables, operationName }, slug: optionalAccount(line) ?? 'demo' };
    },
    async run(context, { request, slug }) {
      const [{ configFromEnv, metadataFileOf }, { buildEngine }, { requestStatements }, { RequestError }] = await Promise.all([load.config(), load.engineHolder(), load.requestStatements(), load.engine()]);
      const config = configFromEnv();
      const account = await findAccount(context.db, slug);
      const engine = await buildEngine(metadataFileOf(config), context.db, { maxDepth: config.maxDepth, maxRows: config.maxRows, planCacheSize: 1, maxInsertObjects: config.maxInsertObjects });
      try {
        const shown = await requestStatements(context.db, engine, request, account.id);
        if (shown.kind === 'static') {
          context.out.write('-- answered without SQL (introspection only)\n');
          return;
        }
        if (shown.kind === 'mutation') {
          // A mutation is shown, never run: its statements in order, with placeholders for the
          // values that come from an earlier statement or are made when it runs. One statement is
          // the one-statement form (engine/README.md, "Writes in one statement"), run in autocommit.
          const how = shown.statements.length === 1 ? 'one statement in autocommit' : `${shown.statements.length} statements in one transaction`;
          context.out.write(`-- a mutation for account ${account.slug}: ${how} (not run)\n`);
          shown.statements.forEach((statement, index) => {
            context.out.write(`\n-- statement ${index + 1}\n${statement.sql};\n-- parameters\n`);
            statement.params.forEach((value, n) => context.out.write(`$${n + 1} = ${JSON.stringify(value)}\n`));
          });
          return;
        }
        context.out.write(`-- one statement for account ${account.slug}\n${shown.statement.sql};\n\n-- parameters\n`);
        shown.statement.params.forEach((value, index) => context.out.write(`$${index + 1} = ${JSON.stringify(value)}\n`));
        context.out.write(`\n-- plan\n${shown.plan.join('\n')}\n`);
      } catch (error) {
        if (error instanceof RequestError) throw new UserInputError(requestErrorsText(error));
        throw error;
      }
    },
  }),
  command({
    words: ['metadata', 'check'],
    synopsis: 'metadata check [--file PATH]',
    description: 'validate the metadata file against its schema and the live database',
    options: { file: { type: 'string' } },
    needsDatabase: true,
    async parse(line) {
      atMostPositionals(line, 0);
      const file = optionText(line, 'file');
      if (file === '') throw new UserInputError('--file needs a path');
      const [{ configFromEnv, metadataFileOf }, { loadMetadataFile, MetadataError }] = await Promise.all([load.config(), load.metadata()]);
      const config = configFromEnv();
      const path = file ?? metadataFileOf(config);
      // The file itself (YAML, its JSON Schema, its references) before the database is opened;
      // `run` checks it against the database.
      try {
        loadMetadataFile(path);
      } catch (error) {
        if (error instanceof MetadataError) throw new UserInputError(`${path}: ${error.message}`);
        throw error;
      }
      return { path, config };
    },
    async run(context, { path, config }) {
      const [{ buildEngine, metadataWarnings }, { MetadataError }] = await Promise.all([load.engineHolder(), load.metadata()]);
      try {
        const engine = await buildEngine(path, context.db, { maxDepth: config.maxDepth, maxRows: config.maxRows, planCacheSize: 1, maxInsertObjects: config.maxInsertObjects });
        context.out.write(`${path} is valid: ${engine.metadata.collections.size} collections\n`);
        // Valid, but worth knowing before it serves: keys it would lock out (exit status still 0).
        for (const warning of await metadataWarnings(engine, context.db)) context.out.write(`warning: ${warning}\n`);
      } catch (error) {
        if (error instanceof MetadataError) throw new UserInputError(`${path}: ${error.message}`);
        throw error;
      }
    },
  }),
  command({
    words: ['webhook', 'add'],
    synopsis: 'webhook add --account SLUG --url URL [--events a,b] [--description D]',
    description: 'add a webhook endpoint (its signing secret alone on the last line)',
    options: { account: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' }, description: { type: 'string' } },
    needsDatabase: true,
    async parse(line) {
      atMostPositionals(line, 0);
      const slug = required(line, 'account');
      const description = optionText(line, 'description');
      const input = {
        url: required(line, 'url'),
        eventTypes: optionText(line, 'events')?.split(',').map((e) => e.trim()).filter(Boolean) ?? null,
        ...(description !== undefined ? { description } : {}),
      };
      // The URL, the event types (the metadata file's) and the description, before the database
      // is opened: `--url 'not a url'` was answered only after it.
      const [{ configFromEnv }, { loadMetadataFile, MetadataError }, { checkNewEndpoint }] = await Promise.all([load.config(), load.metadata(), load.webhooks()]);
      const config = configFromEnv();
      let metadata;
      try {
        metadata = loadMetadataFile(config.metadataPath);
      } catch (error) {
        if (error instanceof MetadataError) throw new UserInputError(`${config.metadataPath}: ${error.message}`);
        throw error;
      }
      const rules = { knownEventTypes: new Set(metadata.eventTypes.keys()), allowPrivate: config.webhooks.allowPrivate };
      await checkNewEndpoint(input, rules);
      return { slug, input, rules, eventTypes: metadata.eventTypes };
    },
    async run(context, { slug, input, rules, eventTypes }) {
      const account = await findAccount(context.db, slug);
      const { applyEventTriggers, createWebhookEndpoint } = await load.webhooks();
      // Capture must be on before the first event, also when no service has run yet.
      await applyEventTriggers(context.db, eventTypes);
      const endpoint = await createWebhookEndpoint(context.db, account.id, input, rules);
      context.out.write(
        `webhook endpoint ${endpoint.id} added for account ${account.slug}: ${endpoint.url} (${endpoint.eventTypes?.join(', ') ?? 'every event type'}).\n` +
          `Its signing secret is shown only now:\n${endpoint.secret}\n`,
      );
    },
  }),
  command({
    words: ['webhook', 'list'],
    synopsis: 'webhook list [--account SLUG]',
    description: 'list webhook endpoints (never their secrets)',
    options: { account: { type: 'string' } },
    needsDatabase: true,
    parse(line) {
      atMostPositionals(line, 0);
      return optionalAccount(line);
    },
    async run(context, slug) {
      const accountId = slug !== undefined ? (await findAccount(context.db, slug)).id : undefined;
      const { listWebhookEndpoints } = await load.webhooks();
      const endpoints = await listWebhookEndpoints(context.db, accountId);
      context.out.write(
        table([
          ['ID', 'ACCOUNT', 'URL', 'EVENTS', 'ACTIVE', 'DESCRIPTION'],
          ...endpoints.map((e) => [e.id, e.accountSlug, e.url, e.eventTypes?.join(',') ?? '*', e.active ? 'yes' : `no (${e.disabledReason ?? 'disabled'})`, e.description]),
        ]),
      );
    },
  }),
  command({
    words: ['webhook', 'remove'],
    synopsis: 'webhook remove <id>',
    description: 'remove a webhook endpoint and its deliveries',
    options: {},
    needsDatabase: true,
    async parse(line) {
      const id = positional(line, 0, 'the endpoint id');
      (await load.webhooks()).checkWebhookId(id, 'webhook endpoint');
      return id;
    },
    async run(context, id) {
      const { removeWebhookEndpoint } = await load.webhooks();
      await removeWebhookEndpoint(context.db, id);
      context.out.write(`webhook endpoint ${id} removed\n`);
    },
  }),
  command({
    words: ['webhook', 'deliveries'],
    synopsis: 'webhook deliveries <id> [--limit N]',
    description: "an endpoint's recent deliveries: event, type, status, attempts, last code, ms, last error, created",
    options: { limit: { type: 'string' } },
    needsDatabase: true,
    async parse(line) {
      const id = positional(line, 0, 'the endpoint id');
      (await load.webhooks()).checkWebhookId(id, 'webhook endpoint');
      return { id, limit: limitOption(line, 50, 1000) };
    },
    async run(context, { id, limit }) {
      const { listWebhookDeliveries } = await load.webhooks();
      const deliveries = await listWebhookDeliveries(context.db, id, { limit });
      context.out.write(
        table([
          ['EVENT', 'TYPE', 'STATUS', 'ATTEMPTS', 'LAST CODE', 'MS', 'LAST ERROR', 'CREATED'],
          ...deliveries.map((d) => [d.eventId, d.eventType, d.status, String(d.attempts), d.lastStatusCode === null ? '-' : String(d.lastStatusCode), d.lastDurationMs === null ? '-' : String(d.lastDurationMs), d.lastError ?? '', d.createdAt.slice(0, 19)]),
        ]),
      );
    },
  }),
  command({
    words: ['webhook', 'redeliver'],
    synopsis: 'webhook redeliver <event-id>',
    description: 'send an event again (same webhook-id) to its active endpoints',
    options: {},
    needsDatabase: true,
    async parse(line) {
      const id = positional(line, 0, 'the event id');
      (await load.webhooks()).checkWebhookId(id, 'event');
      return id;
    },
    async run(context, id) {
      const { redeliverWebhookEvent } = await load.webhooks();
      const queued = await redeliverWebhookEvent(context.db, id);
      context.out.write(`event ${id} queued for redelivery to ${queued} endpoint${queued === 1 ? '' : 's'}\n`);
    },
  }),
  command({
    words: ['worker'],
    synopsis: 'worker',
    description: "deliver webhooks and run the daily fee job until SIGTERM/SIGINT (beside or instead of the service's own worker)",
    options: {},
    needsDatabase: true,
    parse: noArguments,
    async run(context) {
      const [{ configFromEnv }, { WebhookWorker }, { startFeeJob }] = await Promise.all([load.config(), load.webhooks(), load.feeJob()]);
      const config = configFromEnv();
      const logger = {
        warn: (object: Record<string, unknown>, message: string) => context.err.write(`${JSON.stringify({ level: 'warn', msg: message, err: object.err instanceof Error ? object.err.message : undefined })}\n`),
        info: (object: Record<string, unknown>, message: string) => context.out.write(`${JSON.stringify({ level: 'info', msg: message, ...object })}\n`),
      };
      const worker = new WebhookWorker(context.db, config.webhooks, logger);
      worker.start();
      const stopFeeJob = startFeeJob(context.db, logger);
      context.out.write('webhook worker and fee job running; SIGTERM or SIGINT stops them\n');
      await new Promise<void>((resolve) => {
        process.once('SIGTERM', resolve);
        process.once('SIGINT', resolve);
      });
      await stopFeeJob();
      await worker.stop();
      context.out.write('webhook worker stopped\n');
    },
  }),
  command({
    words: ['investors', 'statement'],
    synopsis: 'investors statement --account SLUG --person ID --from DAY --to DAY [--format table|csv|pdf] [--out FILE]',
    description: "a person's investor statement for the period (issue 32): per loan opening and closing principal, principal, interest, fees, adjustments; a PDF needs --out",
    options: { account: { type: 'string' }, person: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, format: { type: 'string' }, out: { type: 'string' } },
    needsDatabase: true,
    async parse(line) {
      atMostPositionals(line, 0);
      const slug = required(line, 'account');
      const person = required(line, 'person');
      const period = await periodOf(line);
      const format = optionText(line, 'format') ?? 'table';
      if (format !== 'table' && format !== 'csv' && format !== 'pdf') throw new UserInputError('--format must be table, csv or pdf');
      const out = optionText(line, 'out');
      if (format === 'pdf' && !out) throw new UserInputError('--format pdf writes a file: give --out FILE');
      await refuseMalformedId(person, `account ${slug} has no person ${person}`);
      return { slug, person, period, format, out };
    },
    async run(context, { slug, person, period, format, out }) {
      const account = await findAccount(context.db, slug);
      const { investorStatement, investorStatementCsv } = await load.investorStatements();
      const statement = await investorStatement(context.db, account.id, person, period);
      if (!statement) throw new UserInputError(`account ${account.slug} has no person ${person}`);
      const written = (content: string | Buffer, what: string) => writtenTo(context, out, content, what);
      if (format === 'pdf') {
        const [{ statementPdf }, { businessDate }] = await Promise.all([load.statementPdf(), load.ledgerReads()]);
        return written(await statementPdf(statement, await businessDate(context.db, account.id)), 'statement PDF');
      }
      if (format === 'csv') return written(investorStatementCsv(statement), 'statement CSV');
      const amounts = ['openingPrincipal', 'funded', 'principal', 'interest', 'fees', 'adjustments', 'total', 'closingPrincipal'] as const;
      written(
        `${oneLine(statement.accountName)}: statement of ${oneLine(statement.person.name)}, ${period.from} to ${period.to} (${statement.currency})\n` +
          table([
            ['loan', 'opening', 'funded', 'principal', 'interest', 'fees', 'adjustments', 'total', 'closing'],
            ...statement.loans.map((loan) => [loan.loanName, ...amounts.map((key) => loan[key])]),
            ['Total', ...amounts.map((key) => statement.totals[key])],
          ]),
        'statement',
      );
    },
  }),
  command({
    words: ['loan', 'payoff-letter'],
    synopsis: 'loan payoff-letter --account SLUG --loan ID [--date DAY] --out FILE',
    description:
      "a loan's payoff letter as a PDF: the payoff on --date (default the business date), itemised, with each unpaid fee and the per diem after it, as GET /api/loan/{id}/payoff?format=pdf writes it",
    options: { account: { type: 'string' }, loan: { type: 'string' }, date: { type: 'string' }, out: { type: 'string' } },
    needsDatabase: true,
    async parse(line) {
      atMostPositionals(line, 0);
      const slug = required(line, 'account');
      const loan = required(line, 'loan');
      const day = (await dayOption(line, 'date')) ?? null;
      const out = required(line, 'out');
      await refuseMalformedId(loan, `account ${slug} has no loan ${loan}`);
      return { slug, loan, day, out };
    },
    async run(context, { slug, loan, day, out }) {
      const account = await findAccount(context.db, slug);
      const [{ LoanReader }, { checkLetterDay, payoffLetter }, { payoffLetterPdf }] = await Promise.all([load.loanReads(), load.payoffLetters(), load.payoffLetterPdf()]);
      // The lender's own letter: the loan as the account sees it (every borrower and address).
      const parties = await (await LoanReader.create(context.db)).letterParties(context.db, account.id, loan);
      if (!parties) throw new UserInputError(`account ${account.slug} has no loan ${loan}`);
      checkLetterDay('--date', day, parties);
      const letter = await payoffLetter(context.db, account.id, parties, day);
      if (!letter) throw new UserInputError(`loan ${loan} has no schedule, so no payoff to quote`);
      writtenTo(context, out, await payoffLetterPdf(letter), 'payoff letter');
      context.out.write(`${oneLine(parties.loanName)}: payoff ${letter.figures.payoff} ${letter.currency} good through ${letter.goodThrough}, per diem ${letter.figures.perDiem}\n`);
    },
  }),
  command({
    words: ['remittance', 'run'],
    synopsis: 'remittance run --account SLUG --from DAY --to DAY [--format table|csv]',
    description: 'what the lender owes each investor for the period: every investor distribution line not yet remitted, dated up to --to (nothing is written)',
    options: { account: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, format: { type: 'string' } },
    needsDatabase: true,
    async parse(line) {
      atMostPositionals(line, 0);
      const slug = required(line, 'account');
      const period = await periodOf(line);
      const format = optionText(line, 'format') ?? 'table';
      if (format !== 'table' && format !== 'csv') throw new UserInputError('--format must be table or csv');
      return { slug, period, format };
    },
    async run(context, { slug, period, format }) {
      const account = await findAccount(context.db, slug);
      const { remittanceCsv, remittanceRun } = await load.remittances();
      const run = await remittanceRun(context.db, account.id, period);
      if (format === 'csv') return void context.out.write(remittanceCsv(run));
      context.out.write(remittanceTable(run.investors, run.totals, `${account.slug}: to pay for ${run.period.from} to ${run.period.to} (${run.currency})`));
      for (const r of run.remitted) context.out.write(`already remitted: ${r.period.from} to ${r.period.to} (${r.id}, ${r.remittedAt}, ${oneLine(r.remittedBy)})\n`);
    },
  }),
  command({
    words: ['remittance', 'mark'],
    synopsis: 'remittance mark --account SLUG --from DAY --to DAY [--total AMOUNT --lines N]',
    description:
      'marks the period remitted: records it (by "cli <user>") and stamps the lines its run owes; a period overlapping or before one remitted is refused; with --total and --lines (the run\'s Total as shown), so is a run that owes anything else by then',
    options: { account: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, total: { type: 'string' }, lines: { type: 'string' } },
    needsDatabase: true,
    async parse(line) {
      atMostPositionals(line, 0);
      return { slug: required(line, 'account'), period: await periodOf(line), shown: await runShownOptions(line) };
    },
    async run(context, { slug, period, shown }) {
      const account = await findAccount(context.db, slug);
      const { markRemitted } = await load.remittances();
      const remittance = await markRemitted(context.db, account.id, { ...period, ...shown }, { commandLine: userInfo().username });
      context.out.write(remittanceTable(remittance.investors, remittance.totals, `${account.slug}: remittance ${remittance.id} of ${remittance.period.from} to ${remittance.period.to} recorded (${remittance.currency})`));
    },
  }),
  command({
    words: ['remittance', 'list'],
    synopsis: 'remittance list --account SLUG [--limit N]',
    description: 'the remittances recorded, latest period first: id, from, to, remitted at, by, total, lines',
    options: { account: { type: 'string' }, limit: { type: 'string' } },
    needsDatabase: true,
    parse(line) {
      atMostPositionals(line, 0);
      return { slug: required(line, 'account'), limit: limitOption(line, 50, 1000) };
    },
    async run(context, { slug, limit }) {
      const account = await findAccount(context.db, slug);
      const { listRemittances } = await load.remittances();
      const remittances = await listRemittances(context.db, account.id, limit);
      if (!remittances.length) return void context.out.write(`account ${account.slug} has no remittance recorded\n`);
      context.out.write(
        table([
          ['ID', 'FROM', 'TO', 'REMITTED AT', 'BY', 'TOTAL', 'LINES'],
          ...remittances.map((r) => [r.id, r.period.from, r.period.to, r.remittedAt.slice(0, 19), r.remittedBy, r.total, String(r.lineCount)]),
        ]),
      );
    },
  }),
  command({
    words: ['remittance', 'show'],
    synopsis: 'remittance show <id> --account SLUG [--format table|csv]',
    description: 'a recorded remittance and what it paid each investor (the lines it stamped)',
    options: { account: { type: 'string' }, format: { type: 'string' } },
    needsDatabase: true,
    async parse(line) {
      const id = positional(line, 0, 'the remittance id');
      const format = optionText(line, 'format') ?? 'table';
      if (format !== 'table' && format !== 'csv') throw new UserInputError('--format must be table or csv');
      const slug = required(line, 'account');
      await refuseMalformedId(id, `account ${slug} has no remittance ${id}`, 404);
      return { id, slug, format };
    },
    async run(context, { id, slug, format }) {
      const account = await findAccount(context.db, slug);
      const { findRemittance, remittanceCsv } = await load.remittances();
      const remittance = await findRemittance(context.db, account.id, id);
      if (!remittance) throw new UserInputError(`account ${account.slug} has no remittance ${id}`, 404);
      if (format === 'csv') return void context.out.write(remittanceCsv(remittance));
      const heading = `${account.slug}: remittance ${remittance.id} of ${remittance.period.from} to ${remittance.period.to}, marked ${remittance.remittedAt.slice(0, 19)} by ${oneLine(remittance.remittedBy)} (${remittance.currency})`;
      context.out.write(remittanceTable(remittance.investors, remittance.totals, heading));
    },
  }),
];

/** A run's or a remittance's lines per investor, with a heading and a total line. */
function remittanceTable(investors: readonly RemittanceInvestor[], totals: { readonly principal: string; readonly interest: string; readonly fees: string; readonly adjustments: string; readonly total: string; readonly lineCount: number }, heading: string): string {
  const amounts = ['principal', 'interest', 'fees', 'adjustments', 'total'] as const;
  return `${heading}\n${table([
    ['investor', ...amounts, 'lines'],
    ...investors.map((investor) => [investor.name, ...amounts.map((key) => investor[key]), String(investor.lineCount)]),
    ['Total', ...amounts.map((key) => totals[key]), String(totals.lineCount)],
  ])}`;
}

/** One line per account: `account demo: 2026-03-20 (1 day): 12 loans replayed, 950 brought forward, 3 fees assessed (1332.72)`. */
function describeFeeJobRun(run: FeeJobRun): string {
  const skipped = run.loansSkipped ? `; ${run.loansSkipped} loan${run.loansSkipped === 1 ? '' : 's'} held by another write still behind: the day is not done, run again` : '';
  if (!run.days.length && !run.loansSkipped) return `account ${run.slug}: ${run.asOf} already assessed; nothing to do`;
  const days = !run.days.includes(run.asOf) ? `${run.asOf} (incomplete)` : run.days.length === 1 ? `${run.asOf} (1 day)` : `${run.days[0]} to ${run.asOf} (${run.days.length} days, caught up)`;
  return `account ${run.slug}: ${days}: ${run.loansReplayed} loan${run.loansReplayed === 1 ? '' : 's'} replayed, ${run.loansForwarded} brought forward, ${run.feesAssessed} fee${run.feesAssessed === 1 ? '' : 's'} assessed (${run.feesAmount})${
    run.loansRefused.length ? `; left as they were, their ledger past 999,999,999,999.99: ${run.loansRefused.join(', ')}` : ''
  }${skipped}`;
}
