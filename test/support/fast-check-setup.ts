// Property-test settings: a modest fixed number of runs in CI, many more under `npm run test:deep`.
// A failure prints its seed and path and stops there: shrinking a slow property once took an hour of CI. To shrink a
// failure, run it again with `FC_SEED=<seed> FC_SHRINK=1` (FC_PATH=<path> starts from the printed case).
import fc from 'fast-check';

const numRuns = Number(process.env['FC_NUM_RUNS'] ?? '100');
const seed = process.env['FC_SEED'] !== undefined ? Number(process.env['FC_SEED']) : undefined;
const path = process.env['FC_PATH'];
fc.configureGlobal({
  numRuns: Number.isFinite(numRuns) && numRuns > 0 ? numRuns : 100,
  endOnFailure: process.env['FC_SHRINK'] !== '1',
  ...(seed !== undefined && Number.isInteger(seed) ? { seed } : {}),
  ...(path !== undefined && path !== '' ? { path } : {}),
});
