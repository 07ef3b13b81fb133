import { html, type Html } from '../html.js';
import { renderPage, type Viewer } from './layout.js';

export const API_KEYS_PATH = '/dashboard/settings/api-keys';
export const WEBHOOKS_PATH = '/dashboard/settings/webhooks';
export const SERVICING_PATH = '/dashboard/settings/servicing';
export const PROFILE_PATH = '/dashboard/settings/profile';

export type SettingsTab = 'api-keys' | 'webhooks' | 'servicing' | 'profile';
/** The settings sub-navigation: each tab is one entry here. */
const TABS: readonly { readonly tab: SettingsTab; readonly label: string; readonly href: string }[] = [
  { tab: 'api-keys', label: 'API keys', href: API_KEYS_PATH },
  { tab: 'webhooks', label: 'Webhooks', href: WEBHOOKS_PATH },
  { tab: 'servicing', label: 'Servicing', href: SERVICING_PATH },
  { tab: 'profile', label: 'Lender profile', href: PROFILE_PATH },
];

/** A Settings page: the heading and the settings sub-navigation (the current tab marked), then its content. */
export function settingsPage(viewer: Viewer, title: string, current: SettingsTab, content: Html, scripts: readonly string[] = []): string {
  return renderPage(
    { title, viewer, section: 'settings', scripts },
    html`<h1>Settings</h1>
<nav class="sub-nav" aria-label="Settings">
  <ul>${TABS.map((item) => html`<li><a href="${item.href}"${item.tab === current ? html` aria-current="page"` : null}>${item.label}</a></li>`)}</ul>
</nav>
${content}`,
  );
}
