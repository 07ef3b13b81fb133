/**
 * Progressive enhancement for the "shown once" key: a Copy button next to the read-only field.
 * Without JavaScript the button stays hidden and the key can be selected and copied by hand.
 */
for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-copy-target]')) {
  const target = document.getElementById(button.dataset.copyTarget ?? '');
  if (!(target instanceof HTMLInputElement)) continue;
  const status = document.getElementById(button.getAttribute('aria-describedby') ?? '');
  button.hidden = false;
  button.addEventListener('click', () => {
    target.select();
    const done = (message: string): void => {
      if (status) status.textContent = message;
    };
    navigator.clipboard.writeText(target.value).then(
      () => done('Copied to the clipboard.'),
      () => done('Could not copy automatically: the key is selected, press Ctrl+C.'),
    );
  });
}

