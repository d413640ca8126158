// Recall on PostgreSQL: a cleared result read back by its placeholder's call id, then after a compaction and a resume,
// and a query; the answers are the ones the same session gets on LevelDB.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  TypeAwareContextProjector,
  assistantMessage,
  defineTool,
  functionCall,
  openLevelLog,
  recallTool,
  replaySession,
  type ModelRequest,
  type ModelResult,
  type SessionEvent,
  type SessionEventLog,
} from '../src/index.js';
import { openPostgresLog } from '../src/postgres/index.js';
import { checkSessionLaws } from '../src/testing/runtime-laws.js';
import { PG_URL, SKIP_MESSAGE, createSchema } from './support.js';

const SECRET = `the deploy token is OTTER-7 ${'filler '.repeat(700)}end`;
const read = defineTool({ name: 'read', description: 'Read', parameters: z.object({ path: z.string() }), execute: ({ path }) => (path === 'a' ? SECRET : `file ${path}: the retry budget is seven`) });
const call = (id: string, name: string, args: object): ModelResult => ({ items: [functionCall(id, name, args)] });
const final = (text: string): ModelResult => ({ outputText: text, items: [assistantMessage(text)] });
const placeholderCallId = (request: ModelRequest): string => /\[tool result cleared: read\(([^)]+)\)\]/.exec(JSON.stringify(request.items))?.[1] ?? 'none';

/** The scripted session: two reads (the first cleared), a recall by the placeholder's call id; compaction; resume; recalls. */
const runSession = async (log: SessionEventLog): Promise<string[]> => {
  let n = 0;
  const options = { model: 'm', log, tools: [read, recallTool()], contextProjector: new TypeAwareContextProjector(), contextBudget: { maxRecentToolResults: 1 }, ids: () => `id-${++n}` };
  const first = Agents.react({ ...options, modelClient: new ScriptedModelClient([call('c1', 'read', { path: 'a' }), call('c2', 'read', { path: 'b' }), (r) => call('r1', 'recall', { id: placeholderCallId(r) }), final('one')]) });
  const session = await first.newSession();
  await session.run('read a and b');
  await session.session.compact(new StructuredSummaryCompactPolicy({ maxItems: 1 }));
  const second = Agents.react({ ...options, modelClient: new ScriptedModelClient([call('r2', 'recall', { id: 'c1', offset: 4000 }), call('r3', 'recall', { query: 'deploy token' }), call('r4', 'recall', { id: 'c9' }), final('two')]) });
  const resumed = await second.resumeSession(session.id);
  await resumed.run('what was the token?');
  const events: SessionEvent[] = [];
  for await (const e of log.read(session.id)) events.push(e);
  expect(checkSessionLaws(events)).toEqual([]);
  expect((await replaySession(log, session.id, { mode: 'rerun' })).identical).toBe(true);
  return events.filter((e) => e.type === 'tool.result' && e.callId.startsWith('r')).map((e) => (e as { output: string }).output);
};

if (PG_URL) {
  const url = PG_URL;
  describe('recall on PostgreSQL', () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it('reads back a cleared and compacted result after a resume, and answers exactly as on LevelDB', async () => {
      const { schema, drop } = await createSchema(url);
      cleanups.push(drop);
      const pgLog = await openPostgresLog({ connectionString: url }, { schema });
      cleanups.push(() => pgLog.close());
      const dir = await mkdtemp(join(tmpdir(), 'cl-recall-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      const levelLog = await openLevelLog(join(dir, 'ledger'));
      cleanups.push(() => levelLog.close());

      const onPg = await runSession(pgLog);
      const onLevel = await runSession(levelLog);
      expect(onPg).toEqual(onLevel);
      expect(onPg[0]).toContain('the deploy token is OTTER-7');
      expect(onPg[0]).toContain('"offset": 4000');
      expect(onPg[1]).toContain('end');
      // The original result, and the first recall's answer (compacted away too), both quote the token.
      expect(onPg[2]).toMatch(/^2 hit\(s\) for "deploy token"/);
      expect(onPg[2]).toContain('OTTER-7');
      expect(onPg[3]).toContain('no tool call "c9"');
    });
  });
} else {
  describe.skip(SKIP_MESSAGE, () => {
    it('skipped', () => undefined);
  });
}
