// Child process for the erase crash test: fills a session (once), then erases its events one by one until killed.
import { openLevelLog } from '../../src/log/index.js';

const [dir, total] = process.argv.slice(2) as [string, string];
const events = Number(total);
const log = await openLevelLog(dir);
if ((await log.head('s')) === 0) {
  for (let i = 1; i <= events; i++) {
    await log.append('s', [{ type: 'tool.result', callId: `c${i}`, output: `secret-${i}-${'x'.repeat(200)}` }]);
  }
}
process.stdout.write('ready\n');
for (let seq = 1; seq <= events; seq++) {
  await log.erase('s', { seqs: [seq, Math.min(events, seq + 1)] }, { reason: `erase ${seq}` });
}
process.stdout.write('done\n');
await new Promise(() => {});
