// Child process for test-integration/runtime/deferred-kill.test.ts: a ReAct run on LevelDB whose projector, at its
// third call (step 3, after step 2's tool result is stored and before step 3's model call), prints `projecting` and
// hangs, so the parent can SIGKILL it while step 2's step.ended and step 3's step.started wait to be stored.
//
// Run: node --import tsx test/support/deferred-kill-child.ts <dir> <sessionId>
import { z } from 'zod';
import { Agents, DefaultContextProjector, ScriptedModelClient, assistantMessage, defineTool, functionCall, openLevelLog, type ContextProjector } from '../../src/index.js';

const [dir, sessionId] = process.argv.slice(2);
if (!dir || !sessionId) {
  process.stderr.write('usage: deferred-kill-child.ts <dir> <sessionId>\n');
  process.exit(2);
}
const inner = new DefaultContextProjector();
let calls = 0;
const hanging: ContextProjector = {
  tokenizer: inner.tokenizer,
  project: (items, budget) => {
    calls += 1;
    if (calls === 3) {
      process.stdout.write('projecting\n');
      // Hang inside the synchronous projection: nothing else of this process runs until it is killed.
      const until = Date.now() + 120_000;
      while (Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
    return inner.project(items, budget);
  },
  describe: () => inner.describe(),
};
const read = defineTool({ name: 'read_file', description: 'Read a file', parameters: z.object({ path: z.string() }), execute: ({ path }) => `// ${path}` });
const log = await openLevelLog(dir);
const agent = Agents.react({
  modelClient: new ScriptedModelClient([
    { items: [functionCall('c1', 'read_file', { path: 'a.ts' })] },
    { items: [functionCall('c2', 'read_file', { path: 'b.ts' })] },
    { items: [assistantMessage('never')] },
  ]),
  model: 'scripted',
  tools: [read],
  log,
  contextProjector: hanging,
  contextBudget: { maxTokens: 2_000 },
});
const session = await agent.newSession({ id: sessionId });
await session.run('Read the files.');
process.stdout.write('finished\n');
