import { readFileSync } from 'node:fs';
import { MetadataError, type ResolvedMetadata } from './model.js';
import { parseMetadataDocument } from './parseMetadataDocument.js';
import { resolveMetadata } from './resolveMetadata.js';

/** Reads a metadata file and resolves it (stages 1 and 2). Throws `MetadataError` naming every problem. */
export function loadMetadataFile(path: string): ResolvedMetadata {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new MetadataError([`cannot read ${path}: ${(error as Error).message}`]);
  }
  return parseMetadata(text, path);
}

/** Metadata text, parsed (stage 1) and resolved (stage 2); `source` names the text in a YAML error. */
export function parseMetadata(text: string, source = 'metadata'): ResolvedMetadata {
  return resolveMetadata(parseMetadataDocument(text, source));
}
