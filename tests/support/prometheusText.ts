/**
 * A minimal, strict parser of the Prometheus text exposition format (version 0.0.4), for tests
 * that read `GET /metrics` (no parser package is installed; prom-client only writes the format).
 * Strict: every sample belongs to a family declared by `# TYPE` before it (a histogram's
 * `_bucket`, `_sum` and `_count` to theirs), names and label names are checked, label values
 * unescaped (`\\`, `\"`, `\n`) and any other escape refused, a sample's labels appear once, and
 * no sample (name and labels) appears twice. Anything else throws, naming the line.
 */
export interface Sample {
  readonly name: string;
  readonly labels: ReadonlyMap<string, string>;
  readonly value: number;
}

export interface MetricFamily {
  readonly name: string;
  readonly type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  readonly help: string;
  readonly samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  const families = new Map<string, MetricFamily>();
  const helps = new Map<string, string>();
  const seen = new Set<string>();
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    const fail = (problem: string): never => {
      throw new Error(`line ${index + 1}: ${problem}: ${JSON.stringify(line)}`);
    };
    if (line === '') return;
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!match) return; // a plain comment
      const [, keyword, name, rest] = match as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) fail('bad metric name');
      if (keyword === 'HELP') {
        if (helps.has(name)) fail('second HELP');
        helps.set(name, unescapeHelp(rest, fail));
        return;
      }
      if (!TYPES.has(rest)) fail('unknown type');
      if (families.has(name)) fail('second TYPE');
      families.set(name, { name, type: rest as MetricFamily['type'], help: '', samples: [] });
      return;
    }
    const sample = parseSample(line, fail);
    const family = familyOf(families, sample.name) ?? fail('sample of no declared family');
    const identity = `${sample.name}{${[...sample.labels].map(([k, v]) => `${k}=${JSON.stringify(v)}`).sort().join(',')}}`;
    if (seen.has(identity)) fail('duplicate sample');
    seen.add(identity);
    family.samples.push(sample);
  });
  for (const [name, help] of helps) {
    const family = families.get(name);
    if (family) families.set(name, { ...family, help });
  }
  return families;
}

function familyOf(families: Map<string, MetricFamily>, sampleName: string): MetricFamily | undefined {
  const direct = families.get(sampleName);
  if (direct) return direct;
  const suffix = /_(bucket|sum|count)$/.exec(sampleName);
  if (!suffix) return undefined;
  const family = families.get(sampleName.slice(0, -suffix[0].length));
  if (!family || (family.type !== 'histogram' && family.type !== 'summary')) return undefined;
  if (suffix[1] === 'bucket' && family.type !== 'histogram') return undefined;
  return family;
}

function parseSample(line: string, fail: (problem: string) => never): Sample {
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line) ?? fail('no metric name');
  const name = nameMatch[0];
  let at = name.length;
  const labels = new Map<string, string>();
  if (line[at] === '{') {
    at += 1;
    while (line[at] !== '}') {
      const labelMatch = /^([^=]*)="/.exec(line.slice(at)) ?? fail('bad label');
      const labelName = labelMatch[1]!;
      if (!LABEL_NAME.test(labelName)) fail('bad label name');
      if (labels.has(labelName)) fail('label given twice');
      at += labelMatch[0].length;
      let value = '';
      for (;;) {
        const char = line[at] ?? fail('unterminated label value');
        at += 1;
        if (char === '"') break;
        if (char === '\\') {
          const escaped = line[at] ?? fail('unterminated escape');
          at += 1;
          if (escaped === 'n') value += '\n';
          else if (escaped === '\\' || escaped === '"') value += escaped;
          else fail('bad escape in a label value');
        } else value += char;
      }
      labels.set(labelName, value);
      if (line[at] === ',') at += 1;
      else if (line[at] !== '}') fail('expected , or }');
    }
    at += 1;
  }
  if (line[at] !== ' ') fail('expected a space before the value');
  const parts = line.slice(at + 1).split(' ');
  if (parts.length > 2 || parts[0] === '') fail('expected a value and an optional timestamp');
  const value = parseValue(parts[0]!, fail);
  if (parts.length === 2 && !/^-?\d+$/.test(parts[1]!)) fail('bad timestamp');
  return { name, labels, value };
}

function parseValue(text: string, fail: (problem: string) => never): number {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  // prom-client writes NaN as `Nan` (an event-loop lag histogram with no sample since the last
  // scrape); Prometheus reads special values with Go's ParseFloat, which ignores their case.
  if (text.toLowerCase() === 'nan') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) fail('bad value');
  return Number(text);
}

function unescapeHelp(text: string, fail: (problem: string) => never): string {
  return text.replace(/\\(.?)/g, (_, escaped: string) => (escaped === 'n' ? '\n' : escaped === '\\' ? '\\' : fail('bad escape in HELP')));
}

/** The value of the one sample named `name` whose labels include `labels` (0 when there is none). */
export function sampleValue(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): number {
  const family = familyOf(families, name);
  const found = family?.samples.filter((sample) => sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels.get(k) === v)) ?? [];
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}

/** Every label value of every sample. */
export function allLabelValues(families: Map<string, MetricFamily>): string[] {
  return [...families.values()].flatMap((family) => family.samples.flatMap((sample) => [...sample.labels.values()]));
}
