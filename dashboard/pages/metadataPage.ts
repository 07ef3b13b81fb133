import { basename } from 'node:path';
import type { MetadataStatus } from '../../app/engineHolder.js';
import { ADMIN_ROLE, type Collection, type EventType, type FilterValue, type Metadata, type PresetValue, type Role, type RootFieldKind, type RowFilter, type ScalarType, type TrackedFunction } from '../../metadata/index.js';
import { html, type Html } from '../html.js';
import { renderPage, type Viewer } from './layout.js';

export const METADATA_PATH = '/dashboard/metadata';

/**
 * The metadata in service (collections, fields, computed fields, relationships, tracked
 * functions, roles with their permissions, event types), when it was loaded, and the last edit of the file that was refused with its
 * problems — before this page, only a line in the service's log — and its warnings for the
 * viewer's account (`metadataWarnings`: API keys and webhook endpoints it leaves without a role,
 * variable or event type they use, named by key prefix and endpoint id).
 */
export function metadataPage(viewer: Viewer, metadata: Metadata, status: MetadataStatus, warnings: readonly string[] = []): string {
  const collections = [...metadata.collections.values()];
  const roles = [...metadata.roles.values()].filter((role) => role.name !== ADMIN_ROLE);
  const eventTypes = [...metadata.eventTypes.values()];
  const functions = [...metadata.functions.values()];
  return renderPage(
    { title: 'Metadata', viewer, section: 'metadata' },
    html`<h1>Metadata</h1>
<p class="lead">What the query interface (<code>/api/graph</code>, the console) serves, for every account: the metadata file as the service loaded it. The service's operator edits the file; the service checks each edit and swaps it in without a restart, or refuses it and keeps serving the metadata below.</p>
${refusal(status)}
${warningBox(warnings)}
<dl class="facts" aria-label="Metadata in service">
  <dt>File</dt><dd><code>${basename(status.path)}</code></dd>
  <dt>Loaded</dt><dd>${timestamp(status.loadedAt)}</dd>
  <dt>Contents</dt><dd>${collections.length} collections, ${functions.length ? `${functions.length} functions, ` : ''}${metadata.roles.size} roles, ${eventTypes.length} event types</dd>
</dl>
<nav aria-label="On this page" class="toc">
  <ul><li><a href="#collections">Collections</a></li>${functions.length ? html`<li><a href="#functions">Functions</a></li>` : null}<li><a href="#roles">Roles</a></li><li><a href="#event-types">Event types</a></li></ul>
</nav>

<h2 id="collections">Collections</h2>
${collections.map((collection) => collectionSection(collection))}
${functions.length ? functionsSection(functions) : null}

<h2 id="roles">Roles</h2>
<p>Every API key carries a role. <strong>${ADMIN_ROLE}</strong> (the dashboard's console, and keys made without a role) reaches everything the collections above expose. The others reach only what they list:</p>
${roles.map((role) => roleSection(role, metadata))}

<h2 id="event-types">Event types</h2>
${eventTypes.length === 0 ? html`<p>The metadata names no event types.</p>` : eventTypeTable(eventTypes)}`,
  );
}

/** What the metadata in service leaves this account's keys and endpoints without; nothing when all fit. */
function warningBox(warnings: readonly string[]): Html | null {
  if (!warnings.length) return null;
  return html`<section class="message message-warning" aria-labelledby="warnings-heading">
  <h2 id="warnings-heading">The metadata leaves ${warnings.length === 1 ? 'something' : `${warnings.length} things`} of this account without what ${warnings.length === 1 ? 'it uses' : 'they use'}</h2>
  <p>The metadata passed its checks and serves, but this account's API keys or webhook endpoints below use a role, a variable or an event type it no longer has. Put it back in the file, or replace the keys (<a href="/dashboard/settings/api-keys">API keys</a>) and change the endpoints (<a href="/dashboard/settings/webhooks">Webhooks</a>). <code>loanql metadata check</code> prints the same warnings for every account.</p>
  <ul class="problems">${warnings.map((warning) => html`<li>${warning}</li>`)}</ul>
</section>`;
}

function refusal(status: MetadataStatus): Html | null {
  const refused = status.lastRefused;
  if (!refused) return null;
  // The file by its name only: the server's directories are not the account admins' business.
  const file = basename(status.path);
  const problems = html`<ul class="problems">${refused.problems.map((problem) => html`<li><code>${problem.replaceAll(status.path, file)}</code></li>`)}</ul>`;
  if (refused.at >= status.loadedAt) {
    return html`<section class="message message-error" role="alert" aria-labelledby="refused-heading">
  <h2 id="refused-heading">The last edit of the metadata file was refused</h2>
  <p>At ${timestamp(refused.at)} the file failed its checks; the metadata loaded at ${timestamp(status.loadedAt)} keeps serving. Fix the file (<code>loanql metadata check</code> names the same problems) and it is picked up at once.</p>
  ${problems}
</section>`;
  }
  return html`<details class="message message-info">
  <summary>An earlier edit was refused at ${timestamp(refused.at)}; a valid one has been loaded since.</summary>
  ${problems}
</details>`;
}

function collectionSection(collection: Collection): Html {
  const id = `collection-${collection.name}`;
  return html`<section class="meta-block" aria-labelledby="${id}">
  <h3 id="${id}"><code>${collection.name}</code></h3>
  <dl class="facts">
    <dt>Table</dt><dd><code>${collection.schema === null ? '' : `${collection.schema}.`}${collection.table}</code>, primary key <code>${collection.primaryKey.map((field) => field.name).join(', ') || 'none'}</code></dd>
    <dt>Root fields</dt><dd>${[...collection.rootFields].map((kind) => rootFieldName(collection.name, kind)).join(', ') || 'none'}</dd>
    <dt>Writes</dt><dd>${writes(collection)}</dd>
  </dl>
  <div class="table-scroll" tabindex="0" role="region" aria-label="Fields of ${collection.name}">
  <table>
    <caption>Fields of ${collection.name}</caption>
    <thead><tr><th scope="col">Field</th><th scope="col">Type</th><th scope="col">Stored in</th></tr></thead>
    <tbody>
      ${[...collection.fields.values()].map(
        (field) =>
          html`<tr><td><code>${field.name}</code></td><td>${field.type}</td><td><code>${field.source.kind === 'column' ? field.source.column : `${field.source.column} → ${field.source.key}`}</code></td></tr>`,
      )}
      ${[...collection.computedFields.values()].map(
        (field) => html`<tr><td><code>${field.name}</code></td><td>${field.type}</td><td>computed: <code>${functionCall(collection, field.function, field.args)}</code></td></tr>`,
      )}
      ${[...collection.tableComputedFields.values()].map(
        (field) =>
          html`<tr><td><code>${field.name}</code></td><td>list of <a href="#collection-${field.returns}"><code>${field.returns}</code></a></td><td>computed: <code>${functionCall(collection, field.function, field.args)}</code></td></tr>`,
      )}
    </tbody>
  </table>
  </div>
  ${
    collection.relationships.size === 0
      ? null
      : html`<div class="table-scroll" tabindex="0" role="region" aria-label="Relationships of ${collection.name}">
  <table>
    <caption>Relationships of ${collection.name}</caption>
    <thead><tr><th scope="col">Relationship</th><th scope="col">To</th><th scope="col">On</th></tr></thead>
    <tbody>
      ${[...collection.relationships.values()].map(
        (relationship) =>
          html`<tr><td><code>${relationship.name}</code></td><td>${relationship.kind === 'array' ? 'list of ' : 'one '}<a href="#collection-${relationship.target}"><code>${relationship.target}</code></a></td><td><code>${relationship.mapping.map(([from, to]) => `${from} = ${relationship.target}.${to}`).join(', ')}</code></td></tr>`,
      )}
    </tbody>
  </table>
  </div>`
  }
</section>`;
}

/** A computed field's call as the engine writes it: the row's tenant value and key, then the arguments by name. */
function functionCall(collection: Collection, fn: string, args: ReadonlyMap<string, ScalarType>): string {
  const row = ['tenant', ...collection.primaryKey.map((field) => field.name)].join(', ');
  return `${collection.schema === null ? '' : `${collection.schema}.`}${fn}(${row}${[...args].map(([name, type]) => `, ${name} ${type}`).join('')})`;
}

/** The tracked functions (`functions:`): their root fields, the call and the collection whose rows they return. */
function functionsSection(functions: readonly TrackedFunction[]): Html {
  return html`<h2 id="functions">Functions</h2>
<p>SQL functions returning a collection's rows, each a root field and its <code>_aggregate</code>; a role has them when it may select the collection, and its row filter applies to their rows.</p>
<div class="table-scroll" tabindex="0" role="region" aria-label="Functions">
<table>
  <caption>Functions</caption>
  <thead><tr><th scope="col">Root fields</th><th scope="col">Function</th><th scope="col">Returns</th></tr></thead>
  <tbody>
    ${functions.map(
      (fn) =>
        html`<tr><td><code>${fn.name}</code>, <code>${fn.name}_aggregate</code></td><td><code>${fn.schema === null ? '' : `${fn.schema}.`}${fn.function}(${[
          ...(fn.tenantArgument === null ? [] : [`${fn.tenantArgument} => the caller's account`]),
          ...[...fn.args].map(([name, { type, required }]) => `${name} ${type}${required ? '' : ' (optional)'}`),
        ].join(', ')})</code></td><td>rows of <a href="#collection-${fn.returns}"><code>${fn.returns}</code></a></td></tr>`,
    )}
  </tbody>
</table>
</div>`;
}

function rootFieldName(collection: string, kind: RootFieldKind): string {
  return kind === 'select' ? collection : kind === 'select_by_pk' ? `${collection}_by_pk` : `${collection}_aggregate`;
}

function writes(collection: Collection): string {
  const parts: string[] = [];
  if (collection.insert) parts.push(`insert (${[...collection.insert.columns.keys()].join(', ') || 'no fields'}${presets(collection.insert.set)})`);
  if (collection.update) parts.push(`update (${[...collection.update.columns.keys()].join(', ') || 'no fields'}${presets(collection.update.set)})`);
  if (collection.delete) parts.push('delete');
  return parts.length ? parts.join('; ') : 'read-only';
}

function presets(set: ReadonlyMap<string, PresetValue>): string {
  if (set.size === 0) return '';
  return `; sets ${[...set.values()].map((preset) => `${preset.field.name} = ${preset.variable ? `key.${preset.variable}` : JSON.stringify(preset.value)}`).join(', ')}`;
}

function roleSection(role: Role, metadata: Metadata): Html {
  const id = `role-${role.name}`;
  const collections = [...role.metadata.collections.values()];
  return html`<section class="meta-block" aria-labelledby="${id}">
  <h3 id="${id}"><code>${role.name}</code></h3>
  <p>${role.variables.size ? html`Key variables: ${[...role.variables].map(([name, type]) => html`<code>${name}</code> (${type}) `)}` : 'No key variables.'} Reaches ${collections.length} of ${metadata.collections.size} collections.</p>
  <div class="table-scroll" tabindex="0" role="region" aria-label="Permissions of ${role.name}">
  <table>
    <caption>Permissions of ${role.name}</caption>
    <thead><tr><th scope="col">Collection</th><th scope="col">Select</th><th scope="col">Insert</th><th scope="col">Update</th><th scope="col">Delete</th></tr></thead>
    <tbody>
      ${collections.map((collection) => {
        const full = metadata.collections.get(collection.name);
        return html`<tr><td><code>${collection.name}</code></td><td>${selectPermission(collection, full)}</td><td>${
          collection.insert ? permission(collection.insert.columns, full?.insert?.columns, collection.insert.check, 'check') : '—'
        }</td><td>${collection.update ? permission(collection.update.columns, full?.update?.columns, collection.update.filter, 'rows', collection.update.check) : '—'}</td><td>${
          collection.delete ? (collection.delete.filter ? html`rows where <code>${describeFilter(collection.delete.filter)}</code>` : 'yes') : '—'
        }</td></tr>`;
      })}
    </tbody>
  </table>
  </div>
</section>`;
}

function selectPermission(collection: Collection, full: Collection | undefined): Html {
  // Fields and the computed fields the role's columns name (a table computed field also needs its collection).
  const selected = (c: Collection): ReadonlyMap<string, unknown> => new Map<string, unknown>([...c.fields, ...c.computedFields, ...c.tableComputedFields]);
  const parts: Html[] = [html`${columnList(selected(collection), full && selected(full))}`];
  if (collection.selectFilter) parts.push(html`; rows where <code>${describeFilter(collection.selectFilter)}</code>`);
  if (collection.selectLimit !== null) parts.push(html`; at most ${collection.selectLimit} rows`);
  parts.push(html`; ${collection.allowAggregations ? 'aggregates' : 'no aggregates'}`);
  return html`${parts}`;
}

function permission(columns: ReadonlyMap<string, unknown>, all: ReadonlyMap<string, unknown> | undefined, filter: RowFilter | null, label: 'check' | 'rows', check: RowFilter | null = null): Html {
  return html`${columnList(columns, all)}${filter ? html`; ${label === 'rows' ? 'rows where' : 'check'} <code>${describeFilter(filter)}</code>` : null}${
    check ? html`; check <code>${describeFilter(check)}</code>` : null
  }`;
}

function columnList(columns: ReadonlyMap<string, unknown>, all: ReadonlyMap<string, unknown> | undefined): string {
  if (all && columns.size === all.size) return 'all fields';
  return [...columns.keys()].join(', ') || 'no fields';
}

const COLUMN_OPERATOR_NAME = { _eq: '_ceq', _neq: '_cne', _gt: '_cgt', _lt: '_clt', _gte: '_cgte', _lte: '_clte' } as const;

/** A role's filter in the query language's own words (`person_id _eq key.person_id`). */
export function describeFilter(filter: RowFilter): string {
  switch (filter.kind) {
    case 'and':
      return filter.items.map((item) => parenthesised(item)).join(' and ') || 'true';
    case 'or':
      return filter.items.map((item) => parenthesised(item)).join(' or ') || 'false';
    case 'not':
      return `not ${parenthesised(filter.item)}`;
    case 'compare':
      return `${filter.field.name} ${filter.operator} ${describeValue(filter.value)}`;
    case 'in':
      return `${filter.field.name} ${filter.negated ? '_nin' : '_in'} ${describeValue(filter.values)}`;
    case 'isNull':
      return `${filter.field.name} _is_null ${describeValue(filter.value)}`;
    case 'jsonb':
    case 'arrayContainment':
      return `${filter.field.name} ${filter.operator} ${describeValue(filter.value)}`;
    case 'computedValue':
      return describeFilter(filter.where);
    case 'cast':
      return `${filter.field.name} _cast { String: { ${describeFilter(filter.where)} } }`;
    case 'relationship':
      return `${filter.relationship.name} { ${describeFilter(filter.where)} }`;
    case 'columns':
      return `${filter.field.name} ${COLUMN_OPERATOR_NAME[filter.operator]} ${filter.other.name}`;
    case 'exists':
      return `_exists ${filter.target.table} { ${describeFilter(filter.where)} }`;
    case 'aggregate': {
      const over = [filter.arguments.length ? `arguments: [${filter.arguments.map((field) => field.name).join(', ')}]` : '', filter.distinct ? 'distinct' : '', filter.filter ? `filter: { ${describeFilter(filter.filter)} }` : '']
        .filter(Boolean)
        .join(', ');
      return `${filter.relationship.name}_aggregate ${filter.fn}${over ? `(${over})` : ''} { ${describeFilter(filter.predicate)} }`;
    }
    case 'computed':
      return `${filter.field.name} ${filter.operator} ${describeValue(filter.value)}`;
  }
}

function parenthesised(filter: RowFilter): string {
  return filter.kind === 'and' || filter.kind === 'or' ? `(${describeFilter(filter)})` : describeFilter(filter);
}

function describeValue(value: FilterValue): string {
  if (value.kind === 'keyVariable') return `key.${value.name}`;
  if (value.kind === 'list') return `[${value.items.map((item) => describeValue(item)).join(', ')}]`;
  return JSON.stringify(value.value) ?? 'null';
}

function eventTypeTable(eventTypes: readonly EventType[]): Html {
  return html`<div class="table-scroll" tabindex="0" role="region" aria-label="Event types">
<table>
  <caption>Event types (webhook endpoints subscribe to these)</caption>
  <thead><tr><th scope="col">Event type</th><th scope="col">Collection</th><th scope="col">On</th><th scope="col">When</th><th scope="col">Payload</th></tr></thead>
  <tbody>
    ${eventTypes.map(
      (type) =>
        html`<tr><td><code>${type.name}</code></td><td><code>${type.collection}</code></td><td>${type.operation.toLowerCase()}</td><td>${condition(type)}</td><td>${[...type.payload.keys(), ...type.related.map((relationship) => `${relationship.key} (${relationship.kind === 'array' ? 'its rows' : 'its row'})`)].join(', ')}</td></tr>`,
    )}
  </tbody>
</table>
</div>`;
}

function condition(type: EventType): string {
  const parts: string[] = [];
  if (type.condition.changed) parts.push(`${type.condition.changed.join(' or ')} changes`);
  if (type.condition.set) parts.push(`${type.condition.set.join(', ')} set`);
  if (type.condition.becomes) parts.push([...type.condition.becomes].map(([column, value]) => `${column} becomes ${JSON.stringify(value)}`).join(', '));
  return parts.join('; ') || 'always';
}

function timestamp(at: Date): Html {
  const iso = at.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC</time>`;
}
