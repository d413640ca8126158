// A progress bar on stderr, shown only when stderr is a terminal (nothing when piped or in --json scripts).
export interface Progress {
  update(done: number, total: number): void;
  finish(): void;
}

const NOOP: Progress = { update: () => undefined, finish: () => undefined };

/**
 * A progress bar for long work (replay, audit of a large session); a no-op unless stderr is a TTY.
 * @example const bar = progressBar('audit'); bar.update(500, 1000); bar.finish();
 */
export const progressBar = (label: string, stream: NodeJS.WriteStream = process.stderr): Progress => {
  if (!stream.isTTY) return NOOP;
  let last = -1;
  let shown = false;
  return {
    update(done, total) {
      const ratio = total > 0 ? Math.min(1, done / total) : 0;
      const percent = Math.floor(ratio * 100);
      if (percent === last) return;
      last = percent;
      shown = true;
      const width = 30;
      const filled = Math.round(ratio * width);
      stream.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(percent).padStart(3)}%`);
    },
    finish() {
      if (shown) stream.write('\r\x1b[2K');
    },
  };
};
