import { html } from '../html.js';
import { renderPage, type Viewer } from './layout.js';

/** A page that says what went wrong and where to go next. */
export function errorPage(title: string, explanation: string, viewer?: Viewer): string {
  return renderPage(
    { title, ...(viewer ? { viewer } : {}) },
    html`<h1>${title}</h1>
<p>${explanation}</p>
<p><a href="/dashboard">Back to the dashboard</a></p>`,
  );
}
