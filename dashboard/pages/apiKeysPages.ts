import type { ApiKeyListing, CreatedApiKey } from '../../app/apiKeys.js';
import { html, type Html } from '../html.js';
import { csrfField, formatTimestamp, message, type Viewer } from './layout.js';
import { onceField } from '../formOnce.js';
import { API_KEYS_PATH, settingsPage } from './settingsFrame.js';

export { API_KEYS_PATH };

/** A role a new key may carry, and the variables a key of it must give. */
export interface RoleChoice {
  readonly name: string;
  readonly variables: readonly string[];
}

export interface ApiKeysView {
  readonly keys: readonly ApiKeyListing[];
  /** The roles of the metadata in service (admin first). */
  readonly roles: readonly RoleChoice[];
  /** Just created: the only time the whole key is shown. */
  readonly created?: CreatedApiKey;
  readonly notice?: string;
  readonly error?: string;
  /** What is wrong with the name, shown next to the field. */
  readonly nameError?: string;
  /** The name typed into the create form, kept after an error. */
  readonly name?: string;
  /** The role and variables picked in the create form, kept after an error. */
  readonly role?: string;
  readonly variables?: ReadonlyMap<string, string>;
}

/** Settings > API keys: the list, the create form, and a new key once. */
export function apiKeysPage(viewer: Viewer, view: ApiKeysView): string {
  return settingsPage(
    viewer,
    'API keys',
    'api-keys',
    html`${view.created ? createdKey(view.created) : null}
${message('ok', view.notice)}
<p class="lead">A key lets a program read and write this account's data through <code>/api</code> with the header <code>Authorization: Token &lt;key&gt;</code>.</p>

<h2 id="create-heading">Create a key</h2>
${message('error', view.error)}
<form class="inline-form key-form" method="post" action="${API_KEYS_PATH}" aria-labelledby="create-heading">
  ${csrfField(viewer.csrfToken)}${onceField()}
  <div class="field">
    <label for="key-name">Name</label>
    <input id="key-name" name="name" type="text" required maxlength="100" value="${view.name ?? ''}" aria-describedby="${view.nameError ? 'key-name-error ' : ''}key-name-hint"${view.nameError ? html` aria-invalid="true" autofocus` : null}>
    ${view.nameError ? html`<span id="key-name-error" class="field-error">${view.nameError === 'must not be blank' ? 'Enter a name: say what the key is for.' : `Name: ${view.nameError}.`}</span>` : null}
    <span id="key-name-hint" class="hint">What the key is for, e.g. "reporting job". 1 to 100 characters.</span>
  </div>
  ${roleFields(view)}
  <div class="form-actions"><button type="submit">Create key</button></div>
</form>

<h2 id="keys-heading">Keys</h2>
${view.keys.length === 0 ? html`<p>This account has no API keys yet.</p>` : keyTable(view.keys)}`,
    [...(view.created ? ['/dashboard/assets/copyKey.js'] : []), '/dashboard/assets/keyRoleFields.js'],
  );
}

/**
 * The role select and one input per key variable of any role; `client/keyRoleFields.ts` shows
 * only the chosen role's (without JavaScript all are shown: each hint names the roles that need
 * it, and only the chosen role's variables are read).
 */
function roleFields(view: ApiKeysView): Html {
  const chosen = view.role ?? 'admin';
  const variables = new Map<string, string[]>();
  for (const role of view.roles) for (const variable of role.variables) variables.set(variable, [...(variables.get(variable) ?? []), role.name]);
  return html`<div class="field">
    <label for="key-role">Role</label>
    <select id="key-role" name="role" aria-describedby="key-role-hint">
      ${view.roles.map((role) => html`<option value="${role.name}"${chosen === role.name ? html` selected` : null}>${role.name}</option>`)}
    </select>
    <span id="key-role-hint" class="hint">Which data the key reaches (metadata roles; admin: everything the API exposes).</span>
  </div>
  ${[...variables].map(
    ([variable, roles]) => html`<div class="field" data-key-roles="${roles.join(' ')}">
    <label for="key-var-${variable}">${variable}</label>
    <input id="key-var-${variable}" name="var_${variable}" type="text" maxlength="100" value="${view.variables?.get(variable) ?? ''}" aria-describedby="key-var-${variable}-hint">
    <span id="key-var-${variable}-hint" class="hint">Needed by the role${roles.length > 1 ? 's' : ''} ${roles.join(', ')}${variable === 'person_id' ? ': the id of a person of this account' : ''}.</span>
  </div>`,
  )}`;
}

function createdKey(created: CreatedApiKey): Html {
  return html`<section class="new-key" aria-labelledby="new-key-heading">
  <h2 id="new-key-heading">Key “${created.name}” created</h2>
  <p><strong>Copy it now: it is shown only this once.</strong> Only a hash of it is stored, so it cannot be shown again.</p>
  <label for="new-key">The new key</label>
  <div class="key-row">
    <input id="new-key" type="text" readonly value="${created.key}" autocomplete="off" spellcheck="false" data-key-prefix="${created.prefix}">
    <button type="button" class="button-secondary" data-copy-target="new-key" aria-describedby="copy-status" hidden>Copy</button>
  </div>
  <p id="copy-status" class="hint" role="status"></p>
</section>`;
}

function keyTable(keys: readonly ApiKeyListing[]): Html {
  return html`<div class="table-scroll" tabindex="0" role="region" aria-labelledby="keys-heading">
<table aria-labelledby="keys-heading">
  <thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Role</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>
    ${keys.map(
      (key) => html`<tr data-key-prefix="${key.prefix}">
      <td>${key.name}</td>
      <td><code>${key.prefix}</code></td>
      <td>${key.role}${Object.keys(key.variables).length ? html` <span class="hint">(${Object.entries(key.variables).map(([name, value]) => `${name}=${value}`).join(', ')})</span>` : null}</td>
      <td>${formatTimestamp(key.createdAt)}</td>
      <td>${formatTimestamp(key.lastUsedAt)}</td>
      <td>${key.active ? html`<span class="status status-active">Active</span>` : html`<span class="status status-inactive">Inactive</span>`}</td>
      <td>${
        key.active
          ? html`<a class="link-danger" href="${deactivatePath(key.prefix)}" aria-label="Deactivate ${key.name} (${key.prefix})">Deactivate</a>`
          : null
      }</td>
    </tr>`,
    )}
  </tbody>
</table>
</div>`;
}

export function deactivatePath(prefix: string): string {
  return `${API_KEYS_PATH}/${encodeURIComponent(prefix)}/deactivate`;
}

/** The confirmation step of deactivating a key: a page with one form, so it works without JS. */
export function confirmDeactivationPage(viewer: Viewer, key: ApiKeyListing): string {
  const body = key.active
    ? html`<p>Requests that use this key are refused from their very next one on. This cannot be undone; create a new key if one is needed again.</p>
<form method="post" action="${deactivatePath(key.prefix)}">
  ${csrfField(viewer.csrfToken)}
  <div class="actions">
    <button type="submit" class="button-danger">Deactivate key</button>
    <a class="button button-secondary" href="${API_KEYS_PATH}">Cancel</a>
  </div>
</form>`
    : html`<p>This key is already inactive.</p><p><a href="${API_KEYS_PATH}">Back to the API keys</a></p>`;
  return settingsPage(
    viewer,
    'Deactivate API key',
    'api-keys',
    html`<h2>Deactivate “${key.name}”?</h2>
<dl class="facts">
  <dt>Name</dt><dd>${key.name}</dd>
  <dt>Prefix</dt><dd><code>${key.prefix}</code></dd>
  <dt>Role</dt><dd>${key.role}</dd>
  <dt>Created</dt><dd>${formatTimestamp(key.createdAt)}</dd>
  <dt>Last used</dt><dd>${formatTimestamp(key.lastUsedAt)}</dd>
</dl>
${body}`,
  );
}
