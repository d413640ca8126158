// Real mini-SWE-agent runs driven through the runtime (budget, Tier-1, compaction), then replayed in both modes: identical.
// The two smallest runs are committed under test/fixtures; the rest are read from ../shared/data when it is there.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openMemoryLog, replaySession } from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';
import { playTrajectory, type Trajectory } from '../support/swe-trajectory.js';
import { readAll } from './support.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.resolve(here, '../fixtures/swe-trajectories');
const shared = process.env['SWE_TRAJECTORIES_DIR'] ?? path.resolve(here, '../../../shared/data/swe-trajectories');
const sharedFiles = existsSync(shared) ? readdirSync(shared).filter((f) => f.endsWith('.traj.json')).sort() : [];
if (!existsSync(shared)) console.warn(`real-runs replay: ${shared} is absent, so only the two committed fixtures are replayed (the other 12 runs are skipped).`);
const fixtureFiles = readdirSync(fixtures).filter((f) => f.endsWith('.traj.json')).sort();
const fixtureRuns = fixtureFiles.map((f) => ({ file: f, from: fixtures }));
// The other 12 shared runs take about a minute in both modes: `npm run test:real-runs` (REPLAY_REAL_RUNS=1) replays them.
const allRuns = process.env['REPLAY_REAL_RUNS'] === '1';
const sharedRuns = allRuns ? sharedFiles.filter((f) => !fixtureFiles.includes(f)).map((f) => ({ file: f, from: shared })) : [];
if (!allRuns) console.info('real-runs replay: the 12 other shared runs are replayed by `npm run test:real-runs` (REPLAY_REAL_RUNS=1).');

const replaysIdentically = async ({ file, from }: { file: string; from: string }): Promise<void> => {
  const trajectory = JSON.parse(readFileSync(path.join(from, file), 'utf8')) as Trajectory;
  const log = await openMemoryLog();
  // The runtime test's driver, without the recorded usage (this replay has always been played without it).
  const { sessionId: id } = await playTrajectory(trajectory, { log, usage: false });
  const events = await readAll(log, id);
  expect(checkSessionLaws(events)).toEqual([]);
  const projected = await replaySession(log, id);
  expect(projected.firstDivergence).toBeUndefined();
  expect(projected.identical).toBe(true);
  const rerun = await replaySession(log, id, { mode: 'rerun' });
  expect(rerun.firstDivergence).toBeUndefined();
  expect(rerun).toMatchObject({ identical: true, steps: projected.steps });
  await log.close();
};

describe('real runs replay identically in both modes', () => {
  it.each(fixtureRuns)('fixture $file', replaysIdentically, 30_000);
  // Under `npm test` the other runs are not registered (the line above says where they run); under
  // `npm run test:real-runs` a missing data directory is a visible skip, which CI counts as a failure.
  if (allRuns) {
    describe.skipIf(sharedRuns.length === 0)(`the other shared runs (skipped: ${shared} has no runs)`, () => {
      it.each(sharedRuns.length > 0 ? sharedRuns : [{ file: '(none)', from: shared }])('shared $file', replaysIdentically, 60_000);
    });
  }
});
