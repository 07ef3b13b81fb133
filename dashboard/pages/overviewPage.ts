import { html } from '../html.js';
import { renderPage, type Viewer } from './layout.js';

export function overviewPage(viewer: Viewer, counts: { readonly activeKeys: number }): string {
  return renderPage(
    { title: 'Overview', viewer, section: 'overview' },
    html`<h1>${viewer.accountName}</h1>
<p class="lead">Logged in as ${viewer.adminEmail}.</p>
<div class="cards">
  <section class="card" aria-labelledby="console-card">
    <h2 id="console-card">Query console</h2>
    <p>Run GraphQL against this account's data and see the one SQL statement each query becomes, with its plan.</p>
    <a class="button" href="/dashboard/console">Open the console</a>
  </section>
  <section class="card" aria-labelledby="keys-card">
    <h2 id="keys-card">API keys</h2>
    <p>${counts.activeKeys === 1 ? '1 active key' : `${counts.activeKeys} active keys`} can reach this account's data through <code>/api</code>.</p>
    <a class="button button-secondary" href="/dashboard/settings/api-keys">Manage API keys</a>
  </section>
</div>`,
  );
}
