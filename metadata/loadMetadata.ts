import { readFileSync, statSync } from 'node:fs';
import { MetadataError, type ResolvedMetadata } from './model.js';
import { parseMetadataSource } from './parseMetadataDocument.js';
import { resolveMetadata } from './resolveMetadata.js';

/**
 * The largest metadata file read: 4 MiB, about 140 times the shipped one. Parsing blocks the
 * service's event loop (about 0.2 s per MiB), so a wrong file saved over it (a dump, a log) is
 * refused by its size before it is read — before, a 30 MB file stalled every request for 6.5 s.
 */
export const MAX_METADATA_FILE_BYTES = 4 * 1024 * 1024;

/**
 * Reads a metadata file and resolves it (stages 1 and 2). Throws `MetadataError` naming every
 * problem; a file that is not a regular one (a directory, a FIFO, which would block the read),
 * is larger than `MAX_METADATA_FILE_BYTES`, or is not UTF-8 text (a binary file) is refused as
 * that, unread or unparsed.
 */
export function loadMetadataFile(path: string): ResolvedMetadata {
  let bytes: Buffer;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new MetadataError([`cannot read ${path}: it is not a regular file (a metadata file is YAML text)`]);
    if (stat.size > MAX_METADATA_FILE_BYTES)
      throw new MetadataError([`${path} is ${megabytes(stat.size)}; a metadata file may be at most ${megabytes(MAX_METADATA_FILE_BYTES)} (is it the right file?)`]);
    bytes = readFileSync(path);
  } catch (error) {
    if (error instanceof MetadataError) throw error;
    throw new MetadataError([`cannot read ${path}: ${(error as Error).message}`]);
  }
  return parseMetadata(textOf(bytes, path), path);
}

/** A file's bytes as UTF-8 text, or a `MetadataError` saying it is not text (and where the first byte that is not is). */
function textOf(bytes: Buffer, path: string): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new MetadataError([`${path} is not a text file: it is not UTF-8 (a metadata file is YAML text)`]);
  }
  const nul = text.indexOf('\0');
  if (nul >= 0) throw new MetadataError([`${path} is not a text file: line ${text.slice(0, nul).split('\n').length} holds a NUL byte (a metadata file is YAML text)`]);
  return text;
}

const megabytes = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

/** Metadata text, parsed (stage 1) and resolved (stage 2); `source` names the text in a YAML error. */
export function parseMetadata(text: string, source = 'metadata'): ResolvedMetadata {
  const { document, lines } = parseMetadataSource(text, source);
  return resolveMetadata(document, lines);
}
