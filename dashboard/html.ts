/**
 * HTML built only through this tagged template: every interpolated value is escaped unless it
 * is itself `Html` (made by `html` here), so a name, e-mail or key can never become markup.
 * Arrays are joined; `null`, `undefined` and `false` render as nothing (for conditionals).
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Interpolation = Html | string | number | boolean | null | undefined | readonly Interpolation[];

export function html(strings: TemplateStringsArray, ...values: readonly Interpolation[]): Html {
  let text = strings[0] ?? '';
  values.forEach((value, index) => {
    text += render(value) + (strings[index + 1] ?? '');
  });
  return new Html(text);
}

function render(value: Interpolation): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map((item: Interpolation) => render(item)).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}
