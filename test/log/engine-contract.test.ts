// The engine contract (describeLogEngineContract) over the LevelDB engine and the memory-level engine.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { MemoryLevel } from 'memory-level';
import { describe, expect, it } from 'vitest';
import { createLevelEngine, type StringLevel } from '../../src/log/level-engine.js';
import { describeLogEngineContract } from '../../src/testing/index.js';

describeLogEngineContract({ describe, it, expect }, 'memory-level', {
  async create() {
    const db = new MemoryLevel<string, string>({ keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    const engine = createLevelEngine(db as unknown as StringLevel);
    return { engine, cleanup: () => engine.close() };
  },
});

describeLogEngineContract({ describe, it, expect }, 'LevelDB (classic-level)', {
  async create() {
    const dir = await mkdtemp(join(tmpdir(), 'context-ledger-engine-'));
    const db = new ClassicLevel<string, string>(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    const engine = createLevelEngine(db as unknown as StringLevel, { sync: false });
    return {
      engine,
      async cleanup() {
        await engine.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
});
