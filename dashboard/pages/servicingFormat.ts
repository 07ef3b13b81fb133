import { html, type Html } from '../html.js';

/** A record of an engine response (lossless-json: numbers are `LosslessNumber`s). */
export type Row = Readonly<Record<string, unknown>>;

/** A response value as text: numbers with PostgreSQL's exact digits, null as ''. */
export function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object' && !Array.isArray(value)) return String(value as { toString(): string });
  return String(value);
}

export function rows(value: unknown): readonly Row[] {
  return Array.isArray(value) ? (value as Row[]) : [];
}

export function row(value: unknown): Row | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Row) : null;
}

/** An amount as sent (`100000.00`), its whole part grouped by thousands: `100,000.00`. Never through a float. */
export function money(value: unknown): string {
  const digits = text(value);
  const match = /^(-?)(\d+)(\.\d+)?$/.exec(digits);
  if (!match) return digits;
  return `${match[1]}${match[2]!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${match[3] ?? ''}`;
}

/** A dash for an empty value, so table cells are never blank. */
export function orDash(value: unknown): Html | string {
  const shown = text(value);
  return shown === '' ? html`<span class="hint" aria-label="none">—</span>` : shown;
}

/** A status as a pill (loan statuses, task statuses). */
export function statusPill(value: unknown): Html {
  const status = text(value);
  return html`<span class="status pill-${status.replace(/[^a-z_]/g, '')}">${status.replace(/_/g, ' ')}</span>`;
}

/** Today's date in UTC (`YYYY-MM-DD`), the default of date inputs. */
export function todayUtc(): string {
  return new Date().toISOString().slice(0, 10);
}
