/**
 * A tiny browser stand-in for HTTP-level dashboard tests: a cookie jar, forms sent as
 * `application/x-www-form-urlencoded`, redirects not followed (tests look at them), and the
 * CSRF token read off the last page, as a browser's form would carry it.
 */
import assert from 'node:assert/strict';
import { createAccount, createAdmin, type Account } from '../../app/accounts.js';
import type { Database } from '../../db/index.js';
import { uniqueSlug } from '../support/http.js';

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** `Location` of a redirect, if any. */
  readonly location: string | null;
}

export class DashboardClient {
  readonly cookies = new Map<string, string>();
  /** The `_csrf` value of the last page that had a form. */
  csrfToken: string | undefined;

  constructor(readonly baseUrl: string) {}

  async get(path: string): Promise<Reply> {
    return this.send(path, { method: 'GET' });
  }

  /** Posts a form; `_csrf` is the last page's token unless the fields say otherwise (or `null`: none). */
  async postForm(path: string, fields: Record<string, string | null>): Promise<Reply> {
    const body = new URLSearchParams();
    const withToken: Record<string, string | null> = { _csrf: this.csrfToken ?? null, ...fields };
    for (const [name, value] of Object.entries(withToken)) if (value !== null) body.set(name, value);
    return this.send(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
  }

  /** Posts JSON as the console does (its CSRF header only when `csrf` is given). */
  async postJson(path: string, body: unknown, csrf?: string): Promise<Reply> {
    return this.send(path, { method: 'POST', headers: { 'content-type': 'application/json', ...(csrf ? { 'x-csrf-token': csrf } : {}) }, body: JSON.stringify(body) });
  }

  /** Follows a redirect reply with a GET, as a browser does after a form's POST. */
  async follow(reply: Reply): Promise<Reply> {
    if (!reply.location || reply.status < 300 || reply.status > 399) throw new Error(`not a redirect: ${reply.status}`);
    return this.get(reply.location);
  }

  /** Opens the login page and logs in; the reply is the login POST's. */
  async logIn(email: string, password: string): Promise<Reply> {
    await this.get('/dashboard/login');
    return this.postForm('/dashboard/login', { email, password });
  }

  /** The session cookie's value, if there is one. */
  get sessionToken(): string | undefined {
    return this.cookies.get('loanql_session');
  }

  async send(path: string, init: RequestInit): Promise<Reply> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(`${this.baseUrl}${path}`, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) } });
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const separator = pair.indexOf('=');
      const name = pair.slice(0, separator).trim();
      const value = pair.slice(separator + 1).trim();
      const expired = attributes.some((attribute) => /^\s*expires=thu, 01 jan 1970/i.test(attribute)) || value === '';
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text)?.[1];
    if (token) this.csrfToken = token;
    return { status: response.status, headers: response.headers, text, location: response.headers.get('location') };
  }
}

/** A new account with one dashboard admin (e-mail `admin@<slug>.test`). */
export async function createAccountWithAdmin(db: Database, password: string, slug = uniqueSlug('dash')): Promise<{ account: Account; email: string }> {
  const account = await createAccount(db, slug, `Lender ${slug}`);
  const email = `admin@${slug}.test`;
  await createAdmin(db, account.id, { email, password, name: 'Dana Admin' });
  return { account, email };
}

/** The key shown once on the page after creating it. */
export function newKeyOnPage(page: string): string | undefined {
  return /id="new-key"[^>]*value="([^"]+)"/.exec(page)?.[1];
}

/** The `_once` one-time token of the form posting to `action` on `page` (`dashboard/formOnce.ts`). */
export function onceToken(page: Reply, action: string): string {
  const form = new RegExp(`<form[^>]* action="${action.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[^>]*>([\\s\\S]*?)</form>`).exec(page.text);
  assert.ok(form, `a form posting to ${action}`);
  const token = /name="_once" value="([^"]+)"/.exec(form[1]!)?.[1];
  assert.ok(token, `the form posting to ${action} carries a one-time token`);
  return token;
}

/**
 * Every visible form field of `page` as the browser would send it back untouched: text, number,
 * tel and e-mail inputs with their values, each select's selected option, each textarea's text
 * (the CSRF token is `DashboardClient.postForm`'s).
 */
export function formFieldsOf(page: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of page.matchAll(/<input type="(?:number|text|tel|email)"[^>]* name="([a-z_0-9]+)"[^>]* value="([^"]*)"/g)) fields[match[1]!] = match[2]!;
  for (const match of page.matchAll(/<select[^>]* name="([a-z_0-9]+)"[^>]*>([\s\S]*?)<\/select>/g)) fields[match[1]!] = /<option value="([^"]+)" selected>/.exec(match[2]!)?.[1] ?? '';
  for (const match of page.matchAll(/<textarea[^>]* name="([a-z_0-9]+)"[^>]*>([\s\S]*?)<\/textarea>/g)) fields[match[1]!] = match[2]!;
  return fields;
}
