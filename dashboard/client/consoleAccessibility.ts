/**
 * GraphiQL 3's markup misses what axe-core (and a screen reader) needs, and it offers no props
 * for it; this fills it in after each render, on the console's own DOM only:
 * - CodeMirror's hidden textareas get names (the query, variables and headers editors, the result);
 * - every editor's scrolling area (CodeMirror's `.CodeMirror-scroll`, tabindex -1) is a Tab stop, a
 *   region named as its editor, so it can be scrolled from the keyboard: the result's always; the
 *   query editor's too since session 43 — at 390 px wide its scroller scrolls, and axe reported a
 *   serious `scrollable-region-focusable` (tests/dashboard/keyboardBrowser.test.ts);
 * - the session tabs are a `tablist` whose `tab`s hold buttons (interactive controls nested in
 *   an interactive role, and the "add tab" button among the tabs): they become what they work
 *   as, a group of buttons, the current one marked `aria-current`.
 */
const EDITOR_NAMES: readonly (readonly [string, string])[] = [
  ['.graphiql-query-editor textarea', 'GraphQL query'],
  ['.graphiql-editor-tool .graphiql-editor:not(.hidden) textarea', 'Variables (JSON)'],
  ['.graphiql-editor-tool textarea', 'Headers (JSON)'],
  ['.graphiql-response textarea', 'Result'],
];

function repair(root: HTMLElement): void {
  for (const [selector, name] of EDITOR_NAMES) {
    for (const textarea of root.querySelectorAll<HTMLTextAreaElement>(selector)) {
      if (!textarea.hasAttribute('aria-label')) textarea.setAttribute('aria-label', name);
    }
  }
  for (const scroller of root.querySelectorAll<HTMLElement>('.CodeMirror-scroll')) {
    // Named as its editor's text (named above); an editor not named there is left alone.
    const name = scroller.closest('.CodeMirror')?.querySelector('textarea')?.getAttribute('aria-label');
    if (name && scroller.getAttribute('role') !== 'region') {
      // CodeMirror gives it tabindex -1 (focusable by script only).
      scroller.tabIndex = 0;
      scroller.setAttribute('role', 'region');
      scroller.setAttribute('aria-label', name);
    }
  }
  // A group of buttons: the list's items (and the "add tab" button beside them) are layout only.
  for (const list of root.querySelectorAll<HTMLElement>('.graphiql-tabs')) {
    if (list.getAttribute('role') !== 'group') {
      list.setAttribute('role', 'group');
      list.setAttribute('aria-label', 'Query tabs');
    }
  }
  for (const tab of root.querySelectorAll<HTMLElement>('.graphiql-tab')) {
    if (tab.getAttribute('role') !== 'presentation') tab.setAttribute('role', 'presentation');
    const selected = tab.getAttribute('aria-selected');
    if (selected !== null) {
      tab.removeAttribute('aria-selected');
      const button = tab.querySelector('.graphiql-tab-button');
      if (selected === 'true') button?.setAttribute('aria-current', 'true');
      else button?.removeAttribute('aria-current');
    }
  }
}

/** Keeps `root`'s GraphiQL accessible as it renders and re-renders. */
export function keepConsoleAccessible(root: HTMLElement): void {
  repair(root);
  new MutationObserver(() => repair(root)).observe(root, { subtree: true, childList: true, attributes: true, attributeFilter: ['role', 'aria-selected'] });
}
