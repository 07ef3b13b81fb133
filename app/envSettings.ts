/**
 * Settings read from the environment (README, "Configuration"). A value the service cannot use
 * is refused at start with one line in our words — the variable, what it takes, what was given —
 * never left to a library that would fail later with its own message (Node's "options.port should
 * be >= 0 and < 65536", pino's "default level:bogus must be included in custom levels") or,
 * worse, take it silently (a timer past 2^31 − 1 ms fires after 1 ms).
 */

/** The largest count or time in milliseconds a setting may be: PostgreSQL's integer, and Node's timers' limit (about 24.8 days). */
export const LARGEST_SETTING = 2_147_483_647;

/** What was given, for a refusal: trimmed, and cut short (a setting is not a secret, but may be long). */
function shown(raw: string): string {
  const text = raw.trim();
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

/**
 * A whole number from `min` to `max` (decimal digits, spaces around ignored), or `fallback` when
 * the variable is unset or empty. `1e3`, `0x10`, `1.5`, `-1` are refused.
 */
export function wholeNumberSetting<Fallback extends number | null>(env: NodeJS.ProcessEnv, name: string, fallback: Fallback, range: { readonly min?: number; readonly max?: number } = {}): number | Fallback {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const { min = 0, max = LARGEST_SETTING } = range;
  const value = /^\d{1,16}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!(value >= min && value <= max)) throw new Error(`${name} must be a whole number from ${min} to ${max}, not ${shown(raw)}`);
  return value;
}

/** One of `choices` (spaces around ignored), or `fallback` when the variable is unset or empty. */
export function choiceSetting<Choice extends string>(env: NodeJS.ProcessEnv, name: string, choices: readonly Choice[], fallback: Choice): Choice {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = raw.trim();
  if (!(choices as readonly string[]).includes(value)) {
    const allowed = choices.length === 2 ? `${choices[0]} or ${choices[1]}` : `one of ${choices.join(' ')}`;
    throw new Error(`${name} must be ${allowed}, not ${shown(raw)}`);
  }
  return value as Choice;
}
