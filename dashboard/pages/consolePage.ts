import { html } from '../html.js';
import { renderPage, type Viewer } from './layout.js';

/** The GraphiQL console (`dashboard/client/console.tsx`, bundled into the assets). */
export function consolePage(viewer: Viewer): string {
  return renderPage(
    {
      title: 'Query console',
      viewer,
      section: 'console',
      bodyClass: 'console-page',
      stylesheets: ['/dashboard/assets/console.css'],
      scripts: ['/dashboard/assets/console.js'],
    },
    html`<h1 class="visually-hidden">Query console</h1>
<div id="console-root">
  <noscript><p class="message message-info">The query console is an interactive editor and needs JavaScript. Without it, run queries with <code>curl</code> and an API key against <code>/api/graph</code>, or see their SQL with <code>loanql sql</code>.</p></noscript>
</div>`,
  );
}
