// Property-test settings: a modest fixed number of runs in CI, many more under `npm run test:deep`.
import fc from 'fast-check';

const numRuns = Number(process.env['FC_NUM_RUNS'] ?? '100');
fc.configureGlobal({ numRuns: Number.isFinite(numRuns) && numRuns > 0 ? numRuns : 100 });
