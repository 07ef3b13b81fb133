import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createApiKey } from '../../app/apiKeys.js';
import { dataOf, send, startSeededService, type Answer, type GraphBody, type SeededService } from '../support/seededService.js';

/**
 * The README's examples run as written. A fenced block right after the line `<!-- runnable -->`
 * (in `README.md` or `docs/*.md`) is run here against the real application over a seeded
 * account whose slug is `demo`, as after the first `npm start`:
 *
 * - every `curl` command is sent as curl would send it (`-H`, `-d`, `-X`; `-d` without a
 *   content type is a form body, as curl makes it) to the service's default address
 *   `localhost:8080`, which is where the README says the service listens;
 * - `npm run loanql -- key create … --role R --var name=value` makes the key the CLI would
 *   (`createApiKey`, the function the CLI calls) and sets `$KEY` for the commands after it;
 *   the block's other CLI lines (`key list`) only print and are not run;
 * - the placeholders a reader fills in are filled in: `<the demo key>` and `$KEY` (the account's
 *   key, or the one the block made), `<loan id>` (a loan in servicing with a schedule),
 *   `<payment id>` (the loan's newest payment not reversed: the one the block just posted),
 *   `<person id>` (a person who funds a loan);
 * - each answer must be 2xx with no GraphQL `errors`, unless a comment `# → …` under the command
 *   says otherwise: `# → 403 {"error": "… …", "permission": "loans.update"}` is a status and the
 *   body's members (`…` matches any text), `# → 403 Not authorized` a status and the whole body, `# → validation-failed: Cannot query …` an error code
 *   and the start of its message (up to a parenthesis); any other arrow text is prose.
 */

const DOCS = [fileURLToPath(new URL('../../README.md', import.meta.url)), ...docsPages()];
const DEFAULT_ADDRESS = 'localhost:8080';

function docsPages(): string[] {
  const dir = new URL('../../docs/', import.meta.url);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => fileURLToPath(new URL(name, dir)));
}

interface RunnableBlock {
  readonly file: string;
  /** 1-based line of the block's opening fence. */
  readonly line: number;
  readonly text: string;
}

/** The fenced blocks marked `<!-- runnable -->` in one Markdown file. */
function runnableBlocks(file: string): RunnableBlock[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: RunnableBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    if (lines[index]!.trim() !== '<!-- runnable -->') continue;
    const fence = index + 1;
    assert.match(lines[fence] ?? '', /^```/, `${file}:${fence + 1}: <!-- runnable --> must be right above a fenced block`);
    const close = lines.findIndex((line, at) => at > fence && line.startsWith('```'));
    assert.ok(close > fence, `${file}:${fence + 1}: the block never closes`);
    blocks.push({ file, line: fence + 1, text: lines.slice(fence + 1, close).join('\n') });
    index = close;
  }
  return blocks;
}

/** A shell line split into words as sh would: quotes removed, `\` escapes in double quotes, `#` comments dropped. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let index = 0; index < line.length; index += 1) {
    const character = line[index]!;
    if (/\s/.test(character)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (character === '#' && word === null) {
      break;
    } else if (character === "'") {
      const end = line.indexOf("'", index + 1);
      assert.ok(end > index, `unclosed ' in ${line}`);
      word = (word ?? '') + line.slice(index + 1, end);
      index = end;
    } else if (character === '"') {
      let text = '';
      index += 1;
      while (line[index] !== '"') {
        assert.ok(index < line.length, `unclosed " in ${line}`);
        if (line[index] === '\\' && /["\\$`]/.test(line[index + 1] ?? '')) index += 1;
        text += line[index];
        index += 1;
      }
      word = (word ?? '') + text;
    } else {
      word = (word ?? '') + character;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

interface Command {
  readonly source: string;
  /** The `# → …` comments under the command. */
  readonly expected: string[];
}

/**
 * The block's commands, as sh reads them: `\` at a line's end continues it, a newline inside
 * quotes is part of the word (a JSON body may span lines), `#` outside quotes starts a comment;
 * each command keeps its source and the arrow comments after it.
 */
function commandsOf(text: string): Command[] {
  const commands: Command[] = [];
  const joined = text.replace(/\\\n/g, ' ');
  let source = '';
  let quote: "'" | '"' | null = null;
  const finish = (): void => {
    if (source.trim() !== '') commands.push({ source: source.trim(), expected: [] });
    source = '';
  };
  for (let index = 0; index < joined.length; index += 1) {
    const character = joined[index]!;
    if (quote !== null) {
      if (character === '\\' && quote === '"') {
        source += character + (joined[index + 1] ?? '');
        index += 1;
        continue;
      }
      if (character === quote) quote = null;
      source += character;
    } else if (character === "'" || character === '"') {
      quote = character;
      source += character;
    } else if (character === '#' && /(^|\s)$/.test(source)) {
      const end = joined.indexOf('\n', index);
      const comment = joined.slice(index, end === -1 ? joined.length : end);
      finish();
      const arrow = /^#\s*→\s*(.*)$/.exec(comment);
      if (arrow) {
        assert.ok(commands.length > 0, `an expectation before any command: ${comment}`);
        commands.at(-1)!.expected.push(arrow[1]!.trim());
      }
      index = end === -1 ? joined.length : end;
    } else if (character === '\n') {
      finish();
    } else {
      source += character;
    }
  }
  assert.equal(quote, null, `a quote left open in ${text}`);
  finish();
  return commands;
}

interface Placeholders {
  key: string;
  readonly loanId: string;
  readonly personId: string;
  paymentId(): Promise<string>;
}

/** `<the demo key>`, `$KEY`, `<loan id>`, `<person id>`, `<payment id>` filled in. */
async function fillPlaceholders(source: string, values: Placeholders): Promise<string> {
  let filled = source.replaceAll('<the demo key>', values.key).replaceAll('$KEY', values.key).replaceAll('<loan id>', values.loanId).replaceAll('<person id>', values.personId);
  if (filled.includes('<payment id>')) filled = filled.replaceAll('<payment id>', await values.paymentId());
  assert.doesNotMatch(filled, /<[a-z][a-z ]*>|"…"/, `a placeholder this test does not fill: ${source}`);
  return filled;
}

interface CurlRequest {
  readonly url: string;
  readonly init: RequestInit;
}

/** What curl sends for these words, aimed at the test's service instead of `localhost:8080`. */
function curlRequest(words: readonly string[], serviceUrl: string): CurlRequest {
  assert.equal(words[0], 'curl');
  const headers = new Headers();
  let method: string | null = null;
  let body: string | null = null;
  let url: string | null = null;
  for (let index = 1; index < words.length; index += 1) {
    const word = words[index]!;
    const next = (): string => {
      index += 1;
      assert.ok(index < words.length, `${word} needs a value`);
      return words[index]!;
    };
    if (word === '-s' || word === '--silent') continue;
    if (word === '-H' || word === '--header') {
      const header = next();
      const colon = header.indexOf(':');
      headers.set(header.slice(0, colon).trim(), header.slice(colon + 1).trim());
    } else if (word === '-d' || word === '--data') {
      body = next();
    } else if (word === '-X' || word === '--request') {
      method = next();
    } else if (word.startsWith('-')) {
      assert.fail(`curl option ${word} is not understood by this test: teach it, or write the example without it`);
    } else {
      assert.equal(url, null, `two URLs in one curl command: ${words.join(' ')}`);
      url = word;
    }
  }
  assert.ok(url, `no URL in ${words.join(' ')}`);
  const address = /^(?:http:\/\/)?([^/]+)(\/.*)$/.exec(url);
  assert.ok(address, `not an http URL: ${url}`);
  assert.equal(address[1], DEFAULT_ADDRESS, `${url}: the examples use the address the service listens on by default (PORT 8080)`);
  // curl's own default for -d: a form body.
  if (body !== null && !headers.has('content-type')) headers.set('content-type', 'application/x-www-form-urlencoded');
  return { url: `${serviceUrl}${address[2]}`, init: { method: method ?? (body === null ? 'GET' : 'POST'), headers, ...(body === null ? {} : { body }) } };
}

/** `# → 403 {"error": "…", …}`: the status, then the members shown (`…` matches any text). */
function checkExpectation(answer: Answer, expected: string, where: string): void {
  const status = /^(\d{3})\b\s*(.*)$/.exec(expected);
  if (status) {
    assert.equal(answer.status, Number(status[1]), `${where}: ${answer.text.slice(0, 500)}`);
    const shown = status[2]!.trim();
    if (shown.startsWith('{')) {
      const members = JSON.parse(shown) as Record<string, string>;
      const body = answer.body as Record<string, unknown>;
      for (const [name, value] of Object.entries(members)) {
        const pattern = new RegExp(`^${value.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
        assert.match(String(body?.[name]), pattern, `${where}: member ${name}`);
      }
    } else if (shown !== '') {
      assert.equal(answer.text, shown, `${where}: the body`);
    }
    return;
  }
  const code = /^([a-z]+(?:-[a-z]+)+):\s*([^(]*)/.exec(expected);
  if (code) {
    const errors = (answer.body as GraphBody | undefined)?.errors ?? [];
    assert.ok(errors.length > 0, `${where}: expected the error ${code[1]}, got ${answer.text.slice(0, 500)}`);
    assert.equal(errors[0]!.extensions?.code, code[1], `${where}: ${answer.text.slice(0, 500)}`);
    assert.ok(errors[0]!.message.startsWith(code[2]!.trim()), `${where}: the message ${errors[0]!.message}`);
    return;
  }
  checkSuccess(answer, where);
}

function checkSuccess(answer: Answer, where: string): void {
  assert.ok(answer.status >= 200 && answer.status < 300, `${where}: ${answer.status} ${answer.text.slice(0, 500)}`);
  const errors = (answer.body as GraphBody | undefined)?.errors;
  assert.equal(errors, undefined, `${where}: ${answer.text.slice(0, 500)}`);
}

/** `npm run loanql -- key create --account A --name N --role R --var k=v`: the key the CLI makes. */
async function createKeyAsTheCli(service: SeededService, words: readonly string[], where: string): Promise<string> {
  const options = new Map<string, string[]>();
  for (let index = words.indexOf('create') + 1; index < words.length; index += 2) {
    assert.match(words[index]!, /^--/, `${where}: ${words[index]}`);
    options.set(words[index]!, [...(options.get(words[index]!) ?? []), words[index + 1]!]);
  }
  assert.deepEqual(options.get('--account'), [service.account.slug], `${where}: the demo account's slug`);
  const variables = new Map((options.get('--var') ?? []).map((pair) => pair.split('=', 2) as [string, string]));
  return (await createApiKey(service.db, service.account.id, options.get('--name')?.[0] ?? 'readme', { role: options.get('--role')?.[0] ?? 'admin', variables })).key;
}

const BLOCKS = DOCS.flatMap(runnableBlocks);

let service: SeededService;
let loanId: string;
let personId: string;

before(async () => {
  service = await startSeededService({ slug: 'demo', scale: 0.005 });
  const data = dataOf<{ loans: { id: string }[]; funding_sources: { person_id: string }[] }>(
    await service.graph(`{
      loans(where: {status: {_eq: "servicing"}, schedules: {is_next: {_eq: true}}}, limit: 1) { id }
      funding_sources(limit: 1) { person_id }
    }`),
  );
  assert.equal(data.loans.length, 1, 'a loan in servicing with a next installment');
  assert.equal(data.funding_sources.length, 1, 'a person who funds a loan');
  loanId = data.loans[0]!.id;
  personId = data.funding_sources[0]!.person_id;
});

after(async () => {
  await service?.close();
});

describe('docs: the examples marked <!-- runnable --> answer as the docs say', () => {
  it('finds the README examples', () => {
    assert.ok(BLOCKS.filter((block) => block.file.endsWith('README.md')).length >= 5, `${BLOCKS.length} blocks`);
  });

  for (const block of BLOCKS) {
    const name = `${block.file.slice(block.file.lastIndexOf('/') + 1)}:${block.line}`;
    it(`${name} runs as written`, async () => {
      const values: Placeholders = {
        key: service.apiKey,
        loanId,
        personId,
        async paymentId() {
          const data = dataOf<{ payments: { id: string }[] }>(
            await service.graph('query($loan: uuid!) { payments(where: {loan_id: {_eq: $loan}, date_reversed: {_is_null: true}}, order_by: {posted_at: desc}, limit: 1) { id } }', { loan: loanId }),
          );
          assert.equal(data.payments.length, 1, 'a payment of <loan id> to reverse');
          return data.payments[0]!.id;
        },
      };
      let requests = 0;
      for (const command of commandsOf(block.text)) {
        const where = `${name}: ${command.source.slice(0, 100)}`;
        const words = shellWords(await fillPlaceholders(command.source, values));
        if (words[0] === 'curl') {
          const request = curlRequest(words, service.url);
          const answer = await send(request.url, request.init);
          requests += 1;
          if (command.expected.length === 0) checkSuccess(answer, where);
          for (const expected of command.expected) checkExpectation(answer, expected, where);
        } else if (words.slice(0, 6).join(' ') === 'npm run loanql -- key create') {
          values.key = await createKeyAsTheCli(service, words, where);
        } else {
          assert.deepEqual(words.slice(0, 4), ['npm', 'run', 'loanql', '--'], `${where}: only curl and the CLI appear in a runnable block`);
        }
      }
      assert.ok(requests > 0, `${name}: a runnable block with no request`);
    });
  }
});
