import { html, type Html } from '../html.js';

/**
 * The main navigation. Each section is one entry here.
 */
export type NavSection = 'overview' | 'loans' | 'tasks' | 'collections' | 'people' | 'investors' | 'remittances' | 'console' | 'metadata' | 'operations' | 'settings';
const NAVIGATION: readonly { readonly section: NavSection; readonly label: string; readonly href: string }[] = [
  { section: 'overview', label: 'Overview', href: '/dashboard' },
  { section: 'loans', label: 'Loans', href: '/dashboard/loans' },
  { section: 'tasks', label: 'Tasks', href: '/dashboard/tasks' },
  { section: 'collections', label: 'Collections', href: '/dashboard/collections' },
  { section: 'people', label: 'People', href: '/dashboard/people' },
  { section: 'investors', label: 'Investors', href: '/dashboard/investors' },
  { section: 'remittances', label: 'Remittance', href: '/dashboard/remittances' },
  { section: 'console', label: 'Query console', href: '/dashboard/console' },
  { section: 'metadata', label: 'Metadata', href: '/dashboard/metadata' },
  { section: 'operations', label: 'Operations', href: '/dashboard/operations' },
  { section: 'settings', label: 'Settings', href: '/dashboard/settings/api-keys' },
];

/** Who is logged in, for the top bar; its CSRF token signs the logout form. */
export interface Viewer {
  readonly accountName: string;
  /** The account's ISO 4217 currency: every amount is shown in it (`cash`). */
  readonly currency: string;
  readonly adminEmail: string;
  readonly csrfToken: string;
}

export interface PageFrame {
  readonly title: string;
  /** Absent on the pages seen before logging in: no navigation then. */
  readonly viewer?: Viewer;
  readonly section?: NavSection;
  readonly bodyClass?: string;
  readonly stylesheets?: readonly string[];
  readonly scripts?: readonly string[];
}

/** On every page: a POST form is sent once (`client/formGuard.ts`; README, "Double submits"). */
const FORM_GUARD_SCRIPT = '/dashboard/assets/formGuard.js';

/** A whole HTML document around a page's content. */
export function renderPage(frame: PageFrame, content: Html): string {
  const { viewer } = frame;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<link rel="icon" href="data:,">
${viewer ? html`<meta name="csrf-token" content="${viewer.csrfToken}">` : null}
<title>${frame.title} · loanql dashboard</title>
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
${(frame.stylesheets ?? []).map((href) => html`<link rel="stylesheet" href="${href}">`)}
</head>
<body${frame.bodyClass ? html` class="${frame.bodyClass}"` : null}>
<a class="skip-link" href="#main">Skip to content</a>
${viewer ? topBar(viewer, frame.section) : null}
<main id="main" tabindex="-1">
${content}
</main>
<script src="${FORM_GUARD_SCRIPT}" defer></script>
${(frame.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}
</body>
</html>
`.text;
}

function topBar(viewer: Viewer, current: NavSection | undefined): Html {
  return html`<header class="topbar">
  <a class="brand" href="/dashboard">loanql</a>
  <nav class="main-nav" aria-label="Main">
    <ul>
      ${NAVIGATION.map(
        (item) => html`<li><a href="${item.href}"${item.section === current ? html` aria-current="page"` : null}>${item.label}</a></li>`,
      )}
    </ul>
  </nav>
  <div class="who">
    <span><span class="visually-hidden">Account: </span>${viewer.accountName}</span>
    <span>${viewer.adminEmail}</span>
    <form method="post" action="/dashboard/logout">
      ${csrfField(viewer.csrfToken)}
      <button type="submit">Log out</button>
    </form>
  </div>
</header>`;
}

/** The hidden field every dashboard form carries (checked by `requireFormCsrfToken`). */
export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

/** A message box; errors are announced to screen readers at once. */
export function message(kind: 'error' | 'ok' | 'info', text: string | null | undefined): Html | null {
  if (!text) return null;
  return html`<div class="message message-${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</div>`;
}

/**
 * The outcome of what the admin just did — a write's notice, or why it was refused — shown where
 * the eye is: the page puts it beside the form that was used, and `autofocus` on the box
 * (focusable through `tabindex="-1"`) moves the focus to it when the page loads, which scrolls it
 * into view and has screen readers read it; no script needed. At most one per page (`id`).
 */
export function outcome(kind: 'error' | 'ok', text: string | null | undefined): Html | null {
  if (!text) return null;
  return html`<div class="message message-${kind} outcome" id="outcome" tabindex="-1" autofocus role="${kind === 'error' ? 'alert' : 'status'}">${text}</div>`;
}

/**
 * The attributes of a field that a refusal shown in the outcome box names: a form of the loan
 * pages tells its refusal there, starting with the field's label (`Amount: expected …`). Then the
 * field is marked invalid and described by that message, so a screen reader reaching it says so.
 */
export function refusedField(error: string | null | undefined, label: string): Html | null {
  return error?.startsWith(`${label}:`) ? html` aria-invalid="true" aria-describedby="outcome"` : null;
}

/** PostgreSQL's timestamptz text (`2025-05-01 10:11:12.345+00`) as `2025-05-01 10:11 UTC`. */
export function formatTimestamp(text: string | null): Html {
  if (!text) return html`<span class="hint">never</span>`;
  const match = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d)(:\d\d(?:\.\d+)?)?(?:([+-]\d\d):?(\d\d)?)?$/.exec(text);
  if (!match) return html`${text}`;
  const [, date, minutes, seconds = ':00', offsetHours = '+00', offsetMinutes = '00'] = match;
  const offset = `${offsetHours}:${offsetMinutes}`;
  const zone = offset === '+00:00' ? 'UTC' : offset;
  return html`<time datetime="${date}T${minutes}${seconds}${offset}">${date} ${minutes} ${zone}</time>`;
}
