import { html } from '../html.js';
import { csrfField, message, renderPage } from './layout.js';

export interface LoginForm {
  readonly csrfToken: string;
  readonly email?: string;
  readonly error?: string;
  readonly notice?: string;
  /** Where to go after logging in (a dashboard path). */
  readonly next?: string;
}

export function loginPage(form: LoginForm): string {
  // A refusal is read out (role=alert) and both fields point at it, so a screen reader on a field says why.
  const described = form.error ? html` aria-describedby="login-error"` : null;
  const action = form.next ? `/dashboard/login?next=${encodeURIComponent(form.next)}` : '/dashboard/login';
  return renderPage(
    { title: 'Log in', bodyClass: 'login-page' },
    html`<div class="brand-title" aria-hidden="true">loanql</div>
<div class="card">
  <h1>Log in to the dashboard</h1>
  ${form.error ? html`<div class="message message-error" role="alert" id="login-error">${form.error}</div>` : null}
  ${message('info', form.notice)}
  <form class="stack" method="post" action="${action}">
    ${csrfField(form.csrfToken)}
    <div class="field">
      <label for="email">E-mail</label>
      <input id="email" name="email" type="email" autocomplete="username" required autofocus value="${form.email ?? ''}"${described}>
    </div>
    <div class="field">
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required${described}>
    </div>
    <div><button type="submit">Log in</button></div>
  </form>
</div>
<p class="hint">Admins are created with <code>loanql admin create</code>; the first <code>npm start</code> prints the demo admin's login.</p>`,
  );
}
