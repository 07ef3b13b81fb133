/**
 * Every POST form of the dashboard is sent once: the first submit marks the form busy
 * (`aria-busy`, `data-submitting`) and disables its submit buttons, and any further submit of it
 * (a double click, Enter pressed again) is cancelled until the page is shown again. A browser that
 * submits a form a second time while the first request is under way sends both, and the second
 * answer is the one shown; the server also ignores the replay of the forms that create records
 * (`dashboard/formOnce.ts`), this only spares the second request and shows the form is working.
 *
 * The buttons are disabled after the submit event has run (a task, not in the handler): a disabled
 * button's `name=value` is left out of the form data the browser builds after that event. When
 * the page comes back from the back/forward cache (`pageshow` with `persisted`) every form is
 * usable again. Without JavaScript the forms work as before (the server side still holds).
 */
const BUSY_ATTRIBUTE = 'data-submitting';

/** The form's submit buttons: inside it, and outside it naming it (`form="…"`). */
function submitButtons(form: HTMLFormElement): (HTMLButtonElement | HTMLInputElement)[] {
  const inside = [...form.querySelectorAll<HTMLButtonElement | HTMLInputElement>('button, input')];
  const id = form.getAttribute('id');
  const outside = id ? [...document.querySelectorAll<HTMLButtonElement | HTMLInputElement>(`button[form="${CSS.escape(id)}"], input[form="${CSS.escape(id)}"]`)] : [];
  return [...inside, ...outside].filter((element) => element.type === 'submit' || element.type === 'image');
}

function markBusy(form: HTMLFormElement): void {
  form.setAttribute(BUSY_ATTRIBUTE, 'true');
  form.setAttribute('aria-busy', 'true');
  setTimeout(() => {
    if (form.getAttribute(BUSY_ATTRIBUTE) !== 'true') return;
    for (const button of submitButtons(form)) {
      if (button.disabled) continue;
      button.disabled = true;
      button.setAttribute('data-disabled-by-guard', 'true');
    }
  }, 0);
}

function release(form: HTMLFormElement): void {
  form.removeAttribute(BUSY_ATTRIBUTE);
  form.removeAttribute('aria-busy');
  for (const button of submitButtons(form)) {
    if (button.getAttribute('data-disabled-by-guard') !== 'true') continue;
    button.disabled = false;
    button.removeAttribute('data-disabled-by-guard');
  }
}

document.addEventListener('submit', (event) => {
  const form = event.target;
  // Attributes, not `form.method` or `form.id`: a control named `method` (the payment form's) shadows those properties.
  if (!(form instanceof HTMLFormElement) || (form.getAttribute('method') ?? '').toLowerCase() !== 'post' || event.defaultPrevented) return;
  if (form.getAttribute(BUSY_ATTRIBUTE) === 'true') {
    event.preventDefault();
    return;
  }
  markBusy(form);
});

window.addEventListener('pageshow', (event) => {
  if (!event.persisted) return;
  for (const form of document.querySelectorAll<HTMLFormElement>(`form[${BUSY_ATTRIBUTE}]`)) release(form);
});
