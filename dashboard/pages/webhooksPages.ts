import type { CreatedWebhookEndpoint, WebhookDelivery, WebhookEndpoint } from '../../app/webhooks/index.js';
import { html, type Html } from '../html.js';
import { csrfField, formatTimestamp, message, type Viewer } from './layout.js';
import { onceField } from '../formOnce.js';
import { settingsPage, WEBHOOKS_PATH } from './settingsFrame.js';

export { WEBHOOKS_PATH };

export function endpointPath(id: string): string {
  return `${WEBHOOKS_PATH}/${encodeURIComponent(id)}`;
}

export interface WebhooksView {
  readonly endpoints: readonly WebhookEndpoint[];
  readonly eventTypes: readonly string[];
  /** Just created: the only time the secret is shown. */
  readonly created?: CreatedWebhookEndpoint;
  readonly notice?: string;
  readonly error?: string;
  /** The create form's refused fields (`url`, `description`, `events`) and what is wrong with each, told beside it. */
  readonly fieldErrors?: Readonly<Record<string, string>>;
  /** What was typed into the create form, kept after an error. */
  readonly form?: { readonly url: string; readonly description: string; readonly events: readonly string[] };
  /** Endpoints on private and loopback addresses are allowed (`WEBHOOK_ALLOW_PRIVATE=1`): the form says so. */
  readonly allowPrivate?: boolean;
}

/** Settings > Webhooks: the endpoints, the create form, and a new endpoint's secret once. */
export function webhooksPage(viewer: Viewer, view: WebhooksView): string {
  const chosen = new Set(view.form?.events ?? []);
  // A refused field is marked and described by its message, and the first one in the form takes
  // the focus (a keyboard or screen-reader user lands on it): the API key form's way.
  const problems = new Map(Object.entries(view.fieldErrors ?? {}));
  const first = ['url', 'description', 'events'].find((name) => problems.has(name));
  const refused = (name: string): Html | null => (problems.has(name) ? html`${name === 'events' ? null : html` aria-invalid="true"`}${name === first ? html` autofocus` : null}` : null);
  return settingsPage(
    viewer,
    'Webhooks',
    'webhooks',
    html`${view.created ? createdEndpoint(view.created) : null}
${message('ok', view.notice)}
<p class="lead">An endpoint receives this account's events as signed HTTP POSTs (Standard Webhooks), at least once, retried with backoff.</p>

<h2 id="create-heading">Add an endpoint</h2>
${message('error', view.error)}
<form method="post" action="${WEBHOOKS_PATH}" aria-labelledby="create-heading">
  ${csrfField(viewer.csrfToken)}${onceField()}
  <div class="field">
    <label for="webhook-url">URL</label>
    <input id="webhook-url" name="url" type="url" required maxlength="2000" value="${view.form?.url ?? ''}" aria-describedby="${problems.get('url') ? 'webhook-url-error ' : ''}webhook-url-hint"${refused('url')}>
    ${fieldError('webhook-url-error', 'URL', problems.get('url'))}
    <span id="webhook-url-hint" class="hint">http or https; ${view.allowPrivate ? 'private and loopback addresses are allowed here (WEBHOOK_ALLOW_PRIVATE)' : 'private and loopback addresses are refused'}.</span>
  </div>
  <div class="field">
    <label for="webhook-description">Description</label>
    <input id="webhook-description" name="description" type="text" maxlength="500" value="${view.form?.description ?? ''}"${problems.get('description') ? html` aria-describedby="webhook-description-error"` : null}${refused('description')}>
    ${fieldError('webhook-description-error', 'Description', problems.get('description'))}
  </div>
  <fieldset class="field"${problems.get('events') ? html` aria-describedby="webhook-events-error"` : null}>
    <legend>Events (none ticked: every event)</legend>
    ${fieldError('webhook-events-error', 'Events', problems.get('events'))}
    ${view.eventTypes.map(
      (type, index) => html`<label class="checkbox"><input type="checkbox" name="events" value="${type}"${chosen.has(type) ? html` checked` : null}${index === 0 ? refused('events') : null}> <code>${type}</code></label> `,
    )}
  </fieldset>
  <div><button type="submit">Add endpoint</button></div>
</form>

<h2 id="endpoints-heading">Endpoints</h2>
${view.endpoints.length === 0 ? html`<p>This account has no webhook endpoints yet.</p>` : endpointTable(view.endpoints)}`,
  );
}

function createdEndpoint(created: CreatedWebhookEndpoint): Html {
  return html`<section class="new-key" aria-labelledby="new-secret-heading">
  <h2 id="new-secret-heading">Endpoint added</h2>
  <p><strong>Copy the signing secret now: it is shown only this once.</strong> Your receiver needs it to verify each webhook's signature.</p>
  <label for="new-secret">Signing secret</label>
  <div class="key-row">
    <input id="new-secret" type="text" readonly value="${created.secret}" autocomplete="off" spellcheck="false">
  </div>
</section>`;
}

function endpointTable(endpoints: readonly WebhookEndpoint[]): Html {
  return html`<table aria-labelledby="endpoints-heading">
  <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Description</th><th scope="col">Created</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>
    ${endpoints.map(
      (endpoint) => html`<tr data-endpoint-id="${endpoint.id}">
      <td><a href="${endpointPath(endpoint.id)}"><code>${endpoint.url}</code></a></td>
      <td>${endpoint.eventTypes ? endpoint.eventTypes.join(', ') : html`<span class="hint">every event</span>`}</td>
      <td>${endpoint.description}</td>
      <td>${formatTimestamp(endpoint.createdAt)}</td>
      <td>${endpoint.active ? html`<span class="status status-active">Active</span>` : html`<span class="status status-inactive" title="${endpoint.disabledReason ?? ''}">Disabled</span>`}</td>
      <td><a href="${endpointPath(endpoint.id)}" aria-label="Deliveries of ${endpoint.url}">Deliveries</a></td>
    </tr>`,
    )}
  </tbody>
</table>`;
}

export interface EndpointView {
  readonly endpoint: WebhookEndpoint;
  readonly deliveries: readonly WebhookDelivery[];
  readonly notice?: string;
  readonly error?: string;
}

/** One endpoint: its facts, disable/enable, and its recent deliveries with a redeliver button each. */
export function endpointPage(viewer: Viewer, view: EndpointView): string {
  const { endpoint } = view;
  return settingsPage(
    viewer,
    'Webhook endpoint',
    'webhooks',
    html`<h2>Endpoint <code>${endpoint.url}</code></h2>
${message('ok', view.notice)}
${message('error', view.error)}
<dl class="facts">
  <dt>Events</dt><dd>${endpoint.eventTypes ? endpoint.eventTypes.join(', ') : 'every event'}</dd>
  <dt>Description</dt><dd>${endpoint.description}</dd>
  <dt>Status</dt><dd>${endpoint.active ? 'Active' : html`Disabled (${endpoint.disabledReason ?? 'disabled'})`}</dd>
  <dt>Created</dt><dd>${formatTimestamp(endpoint.createdAt)}</dd>
</dl>
<form method="post" action="${endpointPath(endpoint.id)}/${endpoint.active ? 'disable' : 'enable'}">
  ${csrfField(viewer.csrfToken)}
  <button type="submit" class="${endpoint.active ? 'button-danger' : ''}">${endpoint.active ? 'Disable endpoint' : 'Enable endpoint'}</button>
  <a class="button button-secondary" href="${WEBHOOKS_PATH}">Back to the endpoints</a>
</form>

<h2 id="deliveries-heading">Recent deliveries</h2>
${
  view.deliveries.length === 0
    ? html`<p>No deliveries yet.</p>`
    : html`<table aria-labelledby="deliveries-heading">
  <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Status code</th><th scope="col">Duration</th><th scope="col">Attempt</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>
    ${view.deliveries.map(
      (delivery) => html`<tr data-event-id="${delivery.eventId}">
      <td><code>${delivery.eventType}</code><br><span class="hint">${delivery.eventId}</span></td>
      <td>${delivery.status}${delivery.lastError ? html`<br><span class="hint">${delivery.lastError}</span>` : null}</td>
      <td>${delivery.lastStatusCode === null ? '–' : String(delivery.lastStatusCode)}</td>
      <td>${delivery.lastDurationMs === null ? '–' : `${delivery.lastDurationMs} ms`}</td>
      <td>${String(delivery.attempts)}</td>
      <td>${formatTimestamp(delivery.createdAt)}</td>
      <td><form method="post" action="${endpointPath(endpoint.id)}/redeliver">
        ${csrfField(viewer.csrfToken)}${onceField()}
        <input type="hidden" name="event_id" value="${delivery.eventId}">
        <button type="submit" class="button-secondary" aria-label="Redeliver ${delivery.eventType} ${delivery.eventId}">Redeliver</button>
      </form></td>
    </tr>`,
    )}
  </tbody>
</table>`
}`,
  );
}

/** A refused field's message, beside it (its `id` is in the field's `aria-describedby`). */
function fieldError(id: string, label: string, problem: string | undefined): Html | null {
  return problem ? html`<span id="${id}" class="field-error">${label}: ${problem}.</span>` : null;
}
