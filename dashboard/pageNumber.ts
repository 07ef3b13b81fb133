/** The most pages a list's `page` parameter may ask for (the loans list, collections, tasks). */
const MAX_PAGE = 1_000_000;

/** What a `page` that `pageNumberOf` refuses is told. */
export const PAGE_EXPECTED = `expected a whole number from 1 to ${MAX_PAGE}`;

/** A list's `page` parameter (absent: 1) as a number from 1 to `MAX_PAGE`, or null when it is anything else. */
export function pageNumberOf(text: string | undefined): number | null {
  const page = /^\d{1,7}$/.test(text ?? '1') ? Number(text ?? '1') : NaN;
  return page >= 1 && page <= MAX_PAGE ? page : null;
}
