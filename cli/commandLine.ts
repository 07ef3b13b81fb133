/**
 * The command line's whole run, from its words to its exit status (cli/README.md), with the
 * terminal and the environment given: `main.ts` runs it for the process; the tests run it in their
 * own process for what never reaches a database (a mistake on the command line).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { databaseSettingsFromEnv, knownMigrations, migrate, openCommandDatabase, type Database } from '../db/index.js';
import { UserInputError } from '../app/errors.js';
import { COMMANDS, type Command } from './commands.js';
import { helpText } from './help.js';
import { oneLine } from './terminalText.js';

export interface CommandLineIo {
  readonly out: NodeJS.WriteStream;
  readonly err: NodeJS.WriteStream;
  /** Where `DATABASE_URL`, `DATA_DIR` and the database settings are read. */
  readonly env: NodeJS.ProcessEnv;
}

/**
 * Runs `loanql ARGV`, resolving with its exit status: 0 done, 2 a mistake of the command line or
 * input (`UserInputError`, one line on `err`), 1 anything else (the database unavailable, say).
 */
export async function runCommandLine(argv: readonly string[], io: CommandLineIo): Promise<number> {
  try {
    return await commandLine(argv, io);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    io.err.write(`loanql: ${visibleLines(message)}\n`);
    return error instanceof UserInputError ? 2 : 1;
  }
}

async function commandLine(argv: readonly string[], io: CommandLineIo): Promise<number> {
  if (argv[0] === '--version' || argv[0] === '-V') {
    if (argv.length > 1) {
      io.err.write(`loanql: ${argv[0]} takes nothing after it, not ${oneLine(argv.slice(1).join(' '))}\n`);
      return 2;
    }
    io.out.write(`${versionLine()}\n`);
    return 0;
  }
  const words = argv.filter((word) => !word.startsWith('-'));
  if (words[0] === 'help' || argv.some(isHelpOption)) {
    // `loanql key create --help`, `loanql help key`: the usage of the commands named (a group: all
    // of its commands); nothing named, or nothing known, the whole list.
    const named = commandsNamed(words[0] === 'help' ? words.slice(1) : words);
    io.out.write(helpText(named.length ? named : COMMANDS, named.length ? { whole: false } : { whole: true }));
    return 0;
  }
  const command = findCommand(words);
  if (!command) {
    // A mistake: one line naming what was not understood (README: status 2, one-line message).
    const what = words.length ? `unknown command "${words.slice(0, 3).join(' ')}"` : 'no command given';
    io.err.write(`loanql: ${oneLine(what)}; \`loanql help\` lists the commands\n`);
    return 2;
  }
  const rest = argv.slice(argv.indexOf(command.words[command.words.length - 1]!) + 1);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options: command.options as ParseArgsConfig['options'], allowPositionals: true, strict: true, tokens: true });
  } catch (error) {
    io.err.write(`loanql ${command.words.join(' ')}: ${visibleLines(commandLineProblem(error, command))}\n`);
    return 2;
  }
  const repeated = repeatedOption(parsed.tokens ?? [], command);
  if (repeated) {
    io.err.write(`loanql ${command.words.join(' ')}: ${repeated}\n`);
    return 2;
  }
  // The command line is read and checked before any database is opened: a mistake is a
  // `UserInputError` (exit 2) whether or not the database can be reached.
  const run = await command.prepare({ args: optionsOf(parsed.values, command), positionals: parsed.positionals });
  if (!command.needsDatabase) return (await run({ db: null as unknown as Database, out: io.out, err: io.err })) ?? 0;
  const opened = await openCommandDatabase(databaseSettingsFromEnv(io.env));
  try {
    // `migrate`, `backup` and `restore` take the database as they find it (cli/README.md).
    if (!command.takesDatabaseAsIs) await migrate(opened.database);
    return (await run({ db: opened.database, out: io.out, err: io.err })) ?? 0;
  } finally {
    await opened.close();
  }
}

/**
 * The commands the first words name: the longest run of leading words that begins some command's
 * words (`key create acme` → key create; `product field` → the product field commands; none → []).
 * Option values among the words (`--account acme`) come after the command's words and are ignored.
 */
function commandsNamed(words: readonly string[]): readonly Command[] {
  for (let count = Math.min(words.length, 3); count >= 1; count--) {
    const leading = words.slice(0, count);
    const found = COMMANDS.filter((command) => leading.every((word, index) => command.words[index] === word));
    if (found.length) return found;
  }
  return [];
}

/** Options that take no value, in any command: `--dry-run -h` asks for help. */
const FLAGS: ReadonlySet<string> = new Set(COMMANDS.flatMap((command) => Object.entries(command.options).filter(([, option]) => option.type === 'boolean').map(([name]) => `--${name}`)));

/**
 * `--help` or `-h` as an option, not as the value of the option before it: `account set acme
 * --name -h` (a script's `--name "$NAME"`) printed the help and exited 0 with nothing changed; it is
 * parseArgs's mistake now (a value that starts with a dash is written `--name=-h`), exit 2.
 */
function isHelpOption(word: string, index: number, argv: readonly string[]): boolean {
  if (word !== '--help' && word !== '-h') return false;
  const before = argv[index - 1];
  return before === undefined || !before.startsWith('-') || before.includes('=') || before === '--help' || before === '-h' || FLAGS.has(before);
}

/**
 * An option given more than once that the command does not declare `multiple` (only `key create
 * --var`), named: parseArgs keeps the last, so `key create --account a --account b` made a key in
 * account b with nothing said (before session 39). Null when none is.
 */
function repeatedOption(tokens: NonNullable<ReturnType<typeof parseArgs>['tokens']>, command: Command): string | null {
  const declared = new Map(Object.entries(command.options));
  const seen = new Map<string, number>();
  for (const token of tokens) {
    if (token.kind !== 'option' || declared.get(token.name)?.multiple) continue;
    seen.set(token.name, (seen.get(token.name) ?? 0) + 1);
  }
  const repeatable = [...declared].filter(([, option]) => option.multiple).map(([name]) => `--${name}`);
  for (const [name, count] of seen) {
    if (count < 2) continue;
    const only = repeatable.length ? `only ${repeatable.join(', ')} may be repeated` : 'no option of this command may be repeated';
    return `--${name} is given ${count === 2 ? 'twice' : `${count} times`}: give it once (${only})`;
  }
  return null;
}

/**
 * The package's version and the newest migration this build knows, for `loanql --version`: which
 * release a running CLI is, and which databases it can open (one migrated further is refused).
 */
function versionLine(): string {
  return `loanql ${packageVersion()} (migrations up to ${knownMigrations().at(-1)})`;
}

/**
 * The `version` of the project's package.json, found from this file (`cli/commandLine.ts` under
 * tsx, `dist/cli/commandLine.js` built, `/app/dist/…` in the image) by the first package.json
 * named loanql above it.
 */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 4; depth++) {
    try {
      const found = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (found.name === 'loanql' && typeof found.version === 'string') return found.version;
    } catch {
      // No package.json here (or not one to read): look one folder up.
    }
    dir = dirname(dir);
  }
  return 'unknown';
}

/**
 * parseArgs's values as a `Map` (only options given on the command line, each once — a repeated
 * one is refused first, `repeatedOption` — except one declared `multiple`, which keeps every value in order).
 */
function optionsOf(values: ReturnType<typeof parseArgs>['values'], command: Command): ReadonlyMap<string, string | boolean | readonly string[]> {
  const options = new Map<string, string | boolean | readonly string[]>();
  for (const [name, value] of Object.entries(values)) {
    if (Array.isArray(value) && new Map(Object.entries(command.options)).get(name)?.multiple) {
      options.set(name, value.filter((item): item is string => typeof item === 'string'));
      continue;
    }
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (typeof last === 'string' || typeof last === 'boolean') options.set(name, last);
  }
  return options;
}

/**
 * parseArgs's refusal in our words, on one line, naming the option but never what followed it (a
 * value may be a secret). Its own text spans lines for a value that starts with a dash
 * (`--limit -1`) and tells of `--` for an unknown option.
 */
function commandLineProblem(error: unknown, command: Command): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const option = /'(--?[^\s'=<]+)/.exec(message)?.[1];
  if (option && code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${option}; \`loanql help\` shows the options of each command`;
  if (option && code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const declared = new Map(Object.entries(command.options)).get(option.replace(/^-+/, ''));
    if (declared?.type === 'boolean') return `${option} takes no value`;
    return `${option} needs a value; write ${option}=VALUE for one that starts with a dash`;
  }
  return message.split('\n')[0]!;
}

/**
 * A refusal as the terminal shows it: its lines kept (a metadata file's problems, a line each),
 * any other control character in them written visibly (`terminalText.ts`). A refusal quotes what
 * was typed or stored — a slug, a name, a URL — and an escape sequence in it reached the terminal.
 */
function visibleLines(message: string): string {
  return message.split('\n').map(oneLine).join('\n');
}

function findCommand(words: readonly string[]): Command | undefined {
  return COMMANDS.filter((c) => c.words.every((word, i) => words[i] === word)).sort((a, b) => b.words.length - a.words.length)[0];
}
