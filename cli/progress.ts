import cliProgress from 'cli-progress';

/** A progress bar on a terminal; a line per stage when the output is not a terminal. */
export function progressReporter(stream: NodeJS.WriteStream): { update: (done: number, total: number, stage: string) => void; stop: () => void } {
  if (!stream.isTTY) {
    let lastStage = '';
    return {
      update(_done, _total, stage) {
        if (stage !== lastStage) stream.write(`seeding ${stage}…\n`);
        lastStage = stage;
      },
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    { stream, format: 'seeding {bar} {percentage}% | {value}/{total} rows | {stage}', hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total, stage) {
      if (!started) {
        bar.start(total, done, { stage });
        started = true;
      }
      bar.setTotal(total);
      bar.update(done, { stage });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
