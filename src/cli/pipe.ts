// A closed stdout (`context-ledger events S | head -1`) ends the command quietly with exit 0, as git does; a closed
// stderr is ignored, so the exit code still tells what happened.
const isClosedPipe = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
};

/**
 * Installs the handlers on the process's own streams; `exit` runs once on the first closed-pipe write to stdout.
 * @example exitQuietlyWhenStdoutCloses(); // at the top of the CLI entry
 */
export const exitQuietlyWhenStdoutCloses = (
  stdout: NodeJS.WritableStream = process.stdout,
  stderr: NodeJS.WritableStream = process.stderr,
  exit: () => void = () => process.exit(0),
): void => {
  let exiting = false;
  stdout.on('error', (error: unknown) => {
    if (!isClosedPipe(error)) throw error;
    if (exiting) return;
    exiting = true;
    exit();
  });
  stderr.on('error', (error: unknown) => {
    if (!isClosedPipe(error)) throw error;
  });
};
