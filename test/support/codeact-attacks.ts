// Child process for the CodeAct sandbox test: runs the code that took the host down under node:vm.
//
// Run: node --import tsx test/support/codeact-attacks.ts
// One CodeAct run whose model sends each attack as its own execute_javascript call, then answers.
// After the run it waits (a floating rejection or a late tool call would show up then), and prints
// one JSON line: the session's events and the tool's executions. A crash means a non-zero exit.
import { z } from 'zod';
import { Agents, ScriptedModelClient, assistantMessage, defineTool, functionCall, openMemoryLog, type SessionEvent } from '../../src/index.js';

export const ATTACKS = {
  floatingRejection: "Promise.reject(new Error('floating')); (async () => { throw new Error('floating 2'); })(); tools.tick({ n: -1 }).then(() => { throw new Error('late'); }); return 'survived';",
  loopAfterAwait: 'await tools.tick({ n: 0 }); while (true) {}',
  allocationAfterAwait: 'await tools.tick({ n: 0 }); const a = []; for (;;) a.push(new Array(100000).fill(a.length));',
  toolCallsAfterTimeout: 'for (let n = 1; ; n++) await tools.tick({ n });',
  escape: "return this.constructor.constructor('return process')().mainModule.require('child_process').execSync('id').toString();",
} as const;

const executions: { n: number; at: number }[] = [];
const tick = defineTool({
  name: 'tick',
  description: 'Count one tick (takes 40 ms)',
  parameters: z.object({ n: z.number() }),
  execute: async ({ n }) => {
    await new Promise((resolve) => setTimeout(resolve, 40));
    executions.push({ n, at: Date.now() });
    return `tick ${n}`;
  },
});

const names = Object.keys(ATTACKS);
const model = new ScriptedModelClient([
  { items: Object.values(ATTACKS).map((code, i) => functionCall(`a${i}`, 'execute_javascript', { code })) },
  { outputText: 'done', items: [assistantMessage('done')] },
]);
const log = await openMemoryLog();
let counter = 0;
const agent = Agents.codeAct({ modelClient: model, model: 'm', tools: [tick], log, ids: () => `id-${++counter}`, codeTimeoutMs: 2_000, codeMemoryLimitBytes: 32 * 1024 * 1024 });
const session = await agent.newSession();
const result = await session.run('attack');
const finishedAt = Date.now();
await new Promise((resolve) => setTimeout(resolve, 600));
const events: SessionEvent[] = [];
for await (const event of log.read(session.id)) events.push(event);
process.stdout.write(
  `${JSON.stringify({ names, outputText: result.outputText, finishedAt, executions, events, hostProcessAlive: typeof process.pid === 'number' })}\n`,
);
