// Child process for the approval-restart tests: starts a run that waits for approval, or resumes it and decides.
//
// Run: node --import tsx test/support/approval-child.ts '<json settings>'
// settings: { backend: 'level' | 'pg', dir?, url?, schema?, sessionId, phase: 'start' | 'finish' | 'race', decision?: 'approve' | 'reject', by? }
// Prints one JSON line per milestone on stdout. `start` prints {"interrupted": ...} and then waits to be killed; `race`
// resumes, prints {"ready": true}, waits for a line on stdin, then decides and prints {"decided": true} or {"error": code}.
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { Agents, ScriptedModelClient, assistantMessage, defineTool, functionCall, openLevelLog, type SessionEventLog } from '../../src/index.js';
import { openPostgresLog } from '../../src/postgres/index.js';

interface Settings {
  readonly backend: 'level' | 'pg';
  readonly dir?: string;
  readonly url?: string;
  readonly schema?: string;
  readonly sessionId: string;
  readonly phase: 'start' | 'finish' | 'race';
  readonly decision?: 'approve' | 'reject';
  readonly by?: string;
}

const settings = JSON.parse(process.argv[2] ?? '{}') as Settings;
const say = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value)}\n`);

const log: SessionEventLog =
  settings.backend === 'level' ? await openLevelLog(settings.dir!) : await openPostgresLog({ connectionString: settings.url! }, { schema: settings.schema! });

const read = defineTool({ name: 'read', description: 'Read', parameters: z.object({ path: z.string() }), execute: ({ path }) => `contents of ${path}` });
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy',
  parameters: z.object({ target: z.string() }),
  needsApproval: true,
  execute: ({ target }) => `deployed ${target} (pid ${process.pid})`,
});
const answers =
  settings.phase === 'start'
    ? [{ items: [functionCall('c1', 'read', { path: 'a' }), functionCall('c2', 'deploy', { target: 'prod' }), functionCall('c3', 'read', { path: 'b' })] }]
    : [{ outputText: 'deployed', items: [assistantMessage('deployed')] }];
let n = 0;
const agent = Agents.react({
  modelClient: new ScriptedModelClient(answers),
  model: 'm',
  log,
  tools: [read, deploy],
  ids: () => (settings.phase === 'start' && n++ === 0 ? settings.sessionId : `run-${process.pid}-${++n}`),
  checkpointEvery: 4,
});

if (settings.phase === 'start') {
  const session = await agent.newSession();
  const result = await session.run('ship it');
  say({ interrupted: result.status === 'interrupted', pending: result.pendingApprovals });
  setInterval(() => undefined, 1_000); // waits for SIGKILL
} else if (settings.phase === 'finish') {
  const session = await agent.resumeSession(settings.sessionId);
  say({ pending: session.pendingApprovals() });
  await session.approve('c2', { by: settings.by ?? 'ana', reason: 'release window' });
  const result = await session.run();
  say({ status: result.status, outputText: result.outputText });
  await log.close();
} else {
  const session = await agent.resumeSession(settings.sessionId);
  say({ ready: true, pending: session.pendingApprovals().length });
  const lines = createInterface({ input: process.stdin });
  for await (const _line of lines) break;
  try {
    await (settings.decision === 'reject' ? session.reject('c2', { by: settings.by ?? 'someone' }) : session.approve('c2', { by: settings.by ?? 'someone' }));
    say({ decided: true });
  } catch (error) {
    say({ error: (error as { code?: string }).code ?? String(error) });
  }
  await log.close();
  process.exit(0);
}
