import { constants, copyFileSync, existsSync } from 'node:fs';

/**
 * The metadata file an admin edits (`metadata/loanql.yaml`) is local state, like `./data`: it is
 * not in git, and the service or the CLI creates it from the shipped default
 * (`metadata/loanql.default.yaml`, which the tests read) the first time it is needed. So an
 * edit never shows up as a change to the project, and `npm test` never sees it.
 *
 * Returns whether the file was created now.
 */
export function ensureMetadataFile(path: string, shippedPath: string): boolean {
  if (existsSync(path)) return false;
  try {
    copyFileSync(shippedPath, path, constants.COPYFILE_EXCL);
    return true;
  } catch (error) {
    // Another process created it first.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}
