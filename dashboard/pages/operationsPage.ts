import { ADMIN_KEY_ROLE, type ApiKeyListing } from '../../app/apiKeys.js';
import type { TrafficRow } from '../../app/operations/accountTraffic.js';
import type { AdmissionLimits, AdmissionState } from '../../app/operations/costAdmission.js';
import type { RateLimit } from '../../metadata/index.js';
import { html, type Html } from '../html.js';
import { renderPage, type Viewer } from './layout.js';

export const OPERATIONS_PATH = '/dashboard/operations';

/** What the operations page shows: this account's figures and the service's settings, nothing of other accounts. */
export interface OperationsView {
  /** The account's requests to this process over the last hour; null when metrics are off. */
  readonly traffic: readonly TrafficRow[] | null;
  /** The minutes the traffic covers when this process started less than an hour ago (its figures are in memory); null: the whole hour. */
  readonly trafficMinutes: number | null;
  /** Each role of the metadata with the limit its keys get (the role's own, else the default). */
  readonly roles: readonly { readonly name: string; readonly limit: RateLimit | null; readonly fromRole: boolean }[];
  readonly defaultLimit: RateLimit | null;
  /** The account's active keys. */
  readonly keys: readonly ApiKeyListing[];
  /** Admission by cost: its sizes and state now; null when it is off. */
  readonly admission: { readonly limits: AdmissionLimits; readonly state: AdmissionState } | null;
  /** Whether `METRICS_TOKEN` is set (never its value). */
  readonly metricsTokenSet: boolean;
  readonly workers: number;
  /** The port the service listens on (`PORT`): the scrape target's. */
  readonly port: number;
}

/**
 * Settings and figures an operator and an account's admins ask about (issue 35): the rate limit
 * of each key, this account's traffic over the last hour, admission by cost, and how Prometheus
 * scrapes the service.
 */
export function operationsPage(viewer: Viewer, view: OperationsView): string {
  return renderPage(
    { title: 'Operations', viewer, section: 'operations' },
    html`<h1>Operations</h1>
<p class="lead">How this service limits and admits your account's requests, and how they went over the last hour.</p>
<h2 id="traffic-heading">Your requests, last hour</h2>
${trafficSection(view)}
<h2 id="limits-heading">Rate limits</h2>
${limitsSection(view)}
<h2 id="admission-heading">Admission by cost</h2>
${admissionSection(view)}
<h2 id="metrics-heading">Metrics for Prometheus</h2>
${metricsSection(view)}`,
  );
}

function trafficSection(view: OperationsView): Html {
  const process = view.workers > 1 ? html` Figures are this service process's (one of ${view.workers}); your requests are spread over them.` : null;
  if (!view.traffic) return html`<p>Request figures are kept only when the service's metrics are on (<code>METRICS_TOKEN</code> set); they are off.</p>`;
  // After a restart the hour is not whole: the figures are kept in the process's memory.
  const minutes = view.trafficMinutes;
  const partial =
    minutes === null
      ? null
      : html` This service process started ${minutes === 0 ? 'less than a minute' : minutes === 1 ? 'a minute' : `${minutes} minutes`} ago and keeps these figures in memory: they cover only that time, not requests before a restart.`;
  if (view.traffic.length === 0) return html`<p>No requests from your account in the last hour.${partial}${process}</p>`;
  return html`<p>Requests your API keys and this dashboard's console sent, by GraphQL operation type (<code>none</code>: the REST routes). Errors are answers of status 400 or more.${partial}${process}</p>
<table aria-labelledby="traffic-heading">
  <thead><tr><th scope="col">Operation type</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Errors</th><th scope="col" class="num">Mean ms</th><th scope="col" class="num">95th percentile ms (at most)</th><th scope="col" class="num">Slowest ms</th></tr></thead>
  <tbody>${view.traffic.map(
    (row) =>
      html`<tr><th scope="row"><code>${row.operation}</code></th><td class="num">${grouped(row.requests)}</td><td class="num">${grouped(row.errors)}</td><td class="num">${ms(row.meanMs)}</td><td class="num">${ms(row.p95Ms)}</td><td class="num">${ms(row.maxMs)}</td></tr>`,
  )}</tbody>
</table>`;
}

function limitsSection(view: OperationsView): Html {
  const byRole = new Map(view.roles.map((role) => [role.name, role]));
  return html`<p>Each API key has a token bucket shared by every process of the service; over it, a request is answered 429 with <code>Retry-After</code>. The default (<code>RATE_LIMIT_PER_SECOND</code>, <code>RATE_LIMIT_BURST</code>): <strong>${limitText(view.defaultLimit)}</strong>. A role's <code>rate_limit</code> in the metadata replaces it for the role's keys.</p>
<table aria-labelledby="roles-limits-caption">
  <caption id="roles-limits-caption">By role</caption>
  <thead><tr><th scope="col">Role</th><th scope="col">Limit</th><th scope="col">From</th></tr></thead>
  <tbody>${view.roles.map((role) => html`<tr><th scope="row"><code>${role.name}</code></th><td>${limitText(role.limit)}</td><td>${role.fromRole ? 'the role' : 'the default'}</td></tr>`)}</tbody>
</table>
${view.keys.length === 0
    ? html`<p>Your account has no active API keys.</p>`
    : html`<table aria-labelledby="keys-limits-caption">
  <caption id="keys-limits-caption">Your active keys</caption>
  <thead><tr><th scope="col">Key</th><th scope="col">Prefix</th><th scope="col">Role</th><th scope="col">Limit</th></tr></thead>
  <tbody>${view.keys.map((key) => html`<tr><th scope="row">${key.name}</th><td><code>${key.prefix}</code></td><td><code>${key.role}</code></td><td>${keyLimitText(key.role, byRole, view.defaultLimit)}</td></tr>`)}</tbody>
</table>`}`;
}

function admissionSection(view: OperationsView): Html {
  const admission = view.admission;
  if (!admission) return html`<p>Admission by cost is off (<code>ADMISSION_COST_BUDGET=0</code>): every query goes straight to the database pool.</p>`;
  const { limits, state } = admission;
  return html`<p>Each GraphQL query's estimated cost reserves a share of this process's budget — over HTTP and WebSocket alike, and each run of a subscription — a query that would exceed it waits in a queue that is fair between keys, or is answered 503 with <code>Retry-After</code> (over WebSocket: an error with code <code>overloaded</code>; a subscription's refresh runs again a second later). Queries costing less than the cheap lane's limit never wait. Shared by every account of this process.</p>
<dl class="facts" aria-label="Admission by cost">
  <dt>Cheap lane</dt><dd>queries costing under ${grouped(limits.cheapCost)} are admitted at once</dd>
  <dt>Budget</dt><dd>${grouped(limits.budget)} (costly queries running at once: at most ${grouped(limits.costlyConnections)})</dd>
  <dt>Queue</dt><dd>at most ${grouped(limits.queueSize)} waiting, each at most ${grouped(limits.queueWaitMs)} ms</dd>
  <dt>Now</dt><dd>${grouped(state.running)} costly running, cost ${grouped(state.reserved)} reserved, ${grouped(state.waiting)} waiting</dd>
</dl>`;
}

function metricsSection(view: OperationsView): Html {
  if (!view.metricsTokenSet) {
    return html`<p><code>GET /metrics</code> is off: the service's operator turns it on by setting <code>METRICS_TOKEN</code>. It then answers the Prometheus text format to requests bearing that token.</p>`;
  }
  return html`<p><code>GET /metrics</code> is on: <code>METRICS_TOKEN</code> is set (its value is the operator's and is not shown here). Prometheus scrapes it with the token as a bearer token:</p>
<pre><code>scrape_configs:
  - job_name: loanql
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials_file: /etc/prometheus/loanql-metrics-token
    static_configs:
      - targets: ['loanql.example:${view.port}']</code></pre>
<p>The figures are the service's, all accounts together; no label names a key, an account or a query.${view.workers > 1 ? html` With ${view.workers} processes, any of them answers for all.` : null}</p>`;
}

/**
 * A key's limit: its role's, the default for an admin key, and none for a key whose role the
 * metadata no longer has — the API refuses such a key (403) before any limit counts.
 */
function keyLimitText(role: string, byRole: ReadonlyMap<string, { readonly limit: RateLimit | null }>, defaultLimit: RateLimit | null): string {
  const known = byRole.get(role);
  if (known) return limitText(known.limit);
  return role === ADMIN_KEY_ROLE.role ? limitText(defaultLimit) : 'none: the metadata has no such role, so the API refuses this key (403)';
}

const limitText = (limit: RateLimit | null): string => (limit ? `${grouped(limit.perSecond)} per second, burst ${grouped(limit.burst)}` : 'no limit');

/** A count as the other pages show numbers: thousands separated by commas (`175,000`, not `175000`). */
const grouped = (value: number): string => value.toLocaleString('en-US', { maximumFractionDigits: 20 });

const ms = (value: number): string => (value < 10 ? value.toFixed(2) : value.toFixed(1));
