import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** A PDF page's text as a viewer extracts it: every text item joined by a space, and the items by line (baseline). */
export interface PdfPage {
  /** The page's items joined by one space each, as extracted (white space kept). */
  readonly raw: string;
  /** The same with every run of white space one space. */
  readonly text: string;
  /** The page's non-blank items by their baseline's y (rounded), so a label and its amount are seen together. */
  readonly lines: Map<number, string[]>;
}

/** Reads a PDF with pdfjs-dist (its standard fonts, no system fonts), as a viewer does. */
export async function pdfPages(bytes: Uint8Array): Promise<PdfPage[]> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const standardFontDataUrl = join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'standard_fonts') + '/';
  const doc = await pdfjs.getDocument({ data: new Uint8Array(bytes), standardFontDataUrl, useSystemFonts: false }).promise;
  const pages: PdfPage[] = [];
  for (let number = 1; number <= doc.numPages; number += 1) {
    const items = (await (await doc.getPage(number)).getTextContent()).items.flatMap((item) => ('str' in item ? [item] : []));
    const raw = items.map((item) => item.str).join(' ');
    const lines = new Map<number, string[]>();
    for (const item of items) {
      if (!item.str.trim()) continue;
      const y = Math.round(item.transform[5] as number);
      lines.set(y, [...(lines.get(y) ?? []), item.str]);
    }
    pages.push({ raw, text: raw.replace(/\s+/g, ' '), lines });
  }
  return pages;
}
