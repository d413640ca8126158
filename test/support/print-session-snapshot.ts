// Child process for the resume test: opens a LevelDB log, resumes a session by id and prints its snapshot.
//
// Run: node_modules/.bin/tsx test/support/print-session-snapshot.ts <dir> <sessionId>
// Prints `JSON.stringify(session.snapshot())` on one line of stdout and closes the log. Exits 3 when the
// session was not in the log (openSession would have created it).
import { openLevelLog } from '../../src/log/index.js';
import { openSession } from '../../src/session/index.js';

const [dir, sessionId] = process.argv.slice(2);
if (!dir || !sessionId) {
  process.stderr.write('usage: print-session-snapshot.ts <dir> <sessionId>\n');
  process.exit(2);
}

const log = await openLevelLog(dir);
try {
  const session = await openSession(log, { id: sessionId });
  if (!session.resumed) process.exitCode = 3;
  process.stdout.write(`${JSON.stringify(session.snapshot())}\n`);
} finally {
  await log.close();
}
