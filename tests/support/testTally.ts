/**
 * What a test file started, for `TEST_FILE_CPU` (tests/files.mjs): embedded databases opened and
 * child processes run, counted in a process-wide object the shard entry reads around each file.
 */
export type TestTallyKind = 'opens' | 'children';

const tally = ((globalThis as { loanqlTestTally?: Record<TestTallyKind, number> }).loanqlTestTally ??= { opens: 0, children: 0 });

export function countForTestFileCpu(kind: TestTallyKind): void {
  tally[kind] += 1;
}
