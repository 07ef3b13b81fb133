#!/usr/bin/env node
/**
 * `loanql`: the command line (SPEC §2). Works whether or not the service runs: on the
 * embedded database it goes through the running service, or opens `DATA_DIR` itself.
 */
import { runCommandLine } from './commandLine.js';

runCommandLine(process.argv.slice(2), { out: process.stdout, err: process.stderr, env: process.env }).then((code) => process.exit(code));
