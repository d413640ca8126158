// Moving sessions: LevelDB → PostgreSQL → LevelDB keeps every event as stored; copies resume and refuse divergent targets.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  Agents,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  TypeAwareContextProjector,
  assistantMessage,
  defineTool,
  foldMemory,
  functionCall,
  type ModelResult,
} from '../src/index.js';
import { copySession, isSessionsDivergeError, openLevelLog, openMemoryLog, type SessionEventLog } from '../src/log/index.js';
import { InvalidOptionsError } from '../src/base/errors.js';
import { openPostgresLog } from '../src/postgres/index.js';
import { replaySession } from '../src/replay/index.js';
import { checkSessionLaws } from '../src/testing/index.js';
import { collect, inputs, rejectionOf } from '../src/testing/log-contract.js';
import { PG_URL, SKIP_MESSAGE, createSchema } from './support.js';

/** Runs a scripted ReAct agent with compaction on `log`: a session with most event types. */
const recordSession = async (log: SessionEventLog): Promise<string> => {
  const readFile = defineTool({
    name: 'read_file',
    description: 'Read a file',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => `// ${path}\n${'export const x = 1;\n'.repeat(10)}`,
  });
  const step = (n: number): ModelResult => ({ items: [functionCall(`call_${n}`, 'read_file', { path: `src/f${n}\u0000.ts` })] });
  const model = new ScriptedModelClient([
    ...Array.from({ length: 14 }, (_, i) => step(i + 1)),
    { outputText: 'done', items: [assistantMessage('done')] },
  ]);
  const agent = Agents.react({
    modelClient: model,
    model: 'scripted',
    systemPrompt: 'You read files.',
    tools: [readFile],
    log,
    contextProjector: new TypeAwareContextProjector(),
    contextBudget: { maxTokens: 600, maxRecentToolResults: 3, pinnedPrefixItems: 1 },
    compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: 8, pinnedPrefixItems: 1 }, undefined, { compactAbove: 12 }),
    maxSteps: 20,
  });
  const session = await agent.newSession();
  await session.run('Read the files, please.');
  return session.id;
};

if (PG_URL) {
  const url = PG_URL;
  describe('copySession between LevelDB and PostgreSQL', () => {
    const cleanups: (() => Promise<void>)[] = [];
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'cl-pg-copy-'));
    });
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
      await rm(dir, { recursive: true, force: true });
    });
    const level = async (name: string): Promise<SessionEventLog> => {
      const log = await openLevelLog(join(dir, name));
      cleanups.push(() => log.close());
      return log;
    };
    const postgres = async (): Promise<SessionEventLog> => {
      const schema = await createSchema(url);
      cleanups.push(schema.drop);
      const log = await openPostgresLog({ connectionString: url }, { schema: schema.schema });
      cleanups.push(() => log.close());
      return log;
    };

    it('a recorded agent session copied LevelDB → PostgreSQL → LevelDB verifies, reads back and replays identically', async () => {
      const origin = await level('origin');
      const id = await recordSession(origin);
      const events = await collect(origin.read(id));
      expect(events.length).toBeGreaterThan(40);
      expect(new Set(events.map((e) => e.type)).size).toBeGreaterThan(6);
      expect(events.some((e) => e.type === 'memory.compacted')).toBe(true);
      const texts = await collect(origin.readStored(id));

      const pg = await postgres();
      expect(await copySession(origin, pg, id, { batchSize: 7 })).toEqual({ copied: events.length, head: events.length });
      const back = await level('back');
      expect(await copySession(pg, back, id)).toEqual({ copied: events.length, head: events.length });

      for (const log of [pg, back]) {
        expect(await log.verify(id)).toEqual({ valid: true, eventCount: events.length, firstBrokenSeq: null });
        expect(await collect(log.read(id))).toEqual(events);
        expect(await collect(log.readStored(id))).toEqual(texts);
      }
      const copied = await collect(back.read(id));
      expect(foldMemory(copied)).toEqual(foldMemory(events));
      // and it replays identically, in both modes, on every store it went through
      for (const log of [origin, pg, back]) {
        for (const mode of ['project', 'rerun'] as const) {
          const replay = await replaySession(log, id, { mode });
          expect(replay.identical, `${mode} on ${log === origin ? 'origin' : log === pg ? 'PostgreSQL' : 'copy'}: ${JSON.stringify(replay.firstDivergence)}`).toBe(true);
          expect(replay.steps).toBeGreaterThan(10);
        }
      }
      expect(checkSessionLaws(copied)).toEqual([]);
      // the copy goes on where the original stopped
      const [next] = await back.append(id, inputs('more', 1), { expectedSeq: events.length });
      expect(next?.prevHash).toBe(events.at(-1)?.hash);
    });

    it('copies only the missing tail into a target that has a prefix, and refuses a target that diverged', async () => {
      const origin = await openMemoryLog();
      cleanups.push(() => origin.close());
      await origin.append('s', inputs('a', 30));
      const pg = await postgres();
      await pg.importStored('s', (await collect(origin.readStored('s'))).slice(0, 12));
      expect(await copySession(origin, pg, 's', { batchSize: 5 })).toEqual({ copied: 18, head: 30 });
      expect(await copySession(origin, pg, 's')).toEqual({ copied: 0, head: 30 });
      expect(await collect(pg.readStored('s'))).toEqual(await collect(origin.readStored('s')));

      const other = await openMemoryLog();
      cleanups.push(() => other.close());
      await other.append('s', inputs('different', 3));
      const error = await rejectionOf(copySession(origin, other, 's'));
      expect(isSessionsDivergeError(error)).toBe(true);
      expect(error).toMatchObject({ sessionId: 's', seq: 3 });
      expect(await other.head('s')).toBe(3);
      await expect(copySession(origin, pg, 's', { batchSize: 0 })).rejects.toThrow(InvalidOptionsError);
    });
  });
} else {
  describe.skip(SKIP_MESSAGE, () => {
    it('needs CONTEXT_LEDGER_PG_URL', () => {});
  });
}
