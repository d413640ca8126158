// The foundation in one run: append a small agent session to a LevelDB log, fold it into memory, verify the log.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  assistantMessage,
  foldMemory,
  functionCall,
  openAgentMemory,
  openLevelLog,
  userMessage,
  type SessionEvent,
} from '../src/index.js';

const dir = process.argv[2] ?? './.ledger';
const log = await openLevelLog(dir);
try {
  const sessionId = `example-${randomUUID().slice(0, 8)}`;
  const memory = await openAgentMemory(log, sessionId);

  await memory.addUserInput(userMessage('The date parser test fails; please fix it.'));
  await memory.addOutputItems([
    assistantMessage('Running the tests first.', [
      { id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"command":"npm test"}' } },
    ]),
  ]);
  await memory.addToolOutput('call_1', 'FAIL test/date.test.ts\n  expected 2026-12-02, got 2026-12-01', { name: 'bash' });
  await memory.record([
    { type: 'command.failed', command: 'npm test', exitCode: 1, output: '1 failed' },
    { type: 'test.result', status: 'failed', suite: 'test/date.test.ts', passed: 11, failed: 1 },
  ]);
  await memory.addOutputItems([functionCall('call_2', 'edit_file', { path: 'src/date.ts', patch: 'keep the offset' })]);
  await memory.addToolOutput('call_2', 'patched src/date.ts', { name: 'edit_file' });
  await memory.record([{ type: 'artifact.changed', path: 'src/date.ts', change: 'modified' }]);

  const events: SessionEvent[] = [];
  for await (const event of log.read(sessionId)) events.push(event);
  const state = foldMemory(events);

  console.log(`log: ${dir}   session: ${sessionId}   events: ${events.length}`);
  console.log('\nevents');
  for (const e of events) console.log(`  ${String(e.seq).padStart(3)}  ${e.type.padEnd(18)} ${e.hash.slice(0, 12)}…`);
  console.log('\nmemory items (folded from the log)');
  for (const entry of state.entries) {
    const item = entry.item as Record<string, unknown>;
    const text = JSON.stringify(item['content'] ?? item['output'] ?? item['arguments'] ?? '').slice(0, 70);
    console.log(`  ${entry.id.padEnd(6)} ${String(item['type']).padEnd(22)} ${String(item['role'] ?? '').padEnd(10)} ${text}`);
  }
  console.log('\nrecorded facts (kept for compaction, not prompt items)');
  for (const fact of state.facts) console.log(`  seq ${fact.seq}  ${fact.type}`);
  const verification = await log.verify(sessionId);
  console.log('\nverify', verification);
  console.log(`live memory equals the fold of the log: ${isDeepStrictEqual(memory.state(), state)}`);
  if (!verification.valid) process.exitCode = 1;
} finally {
  await log.close();
}
