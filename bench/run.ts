// Entry for `npm run bench`: runs every bench/*.bench.ts (or those matching the arguments), each in its own process.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = dirname(fileURLToPath(import.meta.url));
const rootDir = dirname(benchDir);

const usage = `usage: npm run bench [-- [--list] NAME...]
  Runs bench/*.bench.ts in sequence, each in its own Node process.
  NAME filters by file name (substring, case-insensitive): npm run bench -- projection
  --list prints the benches that would run, and runs none.`;

const selectBenches = (filters: readonly string[]): string[] => {
  const all = readdirSync(benchDir)
    .filter((name) => name.endsWith('.bench.ts'))
    .sort();
  if (filters.length === 0) return all;
  const wanted = filters.map((filter) => filter.toLowerCase());
  return all.filter((name) => wanted.some((filter) => name.toLowerCase().includes(filter)));
};

const runBench = (file: string): Promise<number> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(benchDir, file)], {
      cwd: rootDir,
      stdio: 'inherit',
      env: process.env,
    });
    child.on('error', (error) => {
      console.error(`bench: could not start ${file}: ${error.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });

const formatSeconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

const main = async (): Promise<number> => {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usage);
    return 0;
  }
  const list = args.includes('--list');
  const benches = selectBenches(args.filter((arg) => arg !== '--list'));
  if (benches.length === 0) {
    console.error(`bench: no bench/*.bench.ts matches ${args.length > 0 ? args.join(', ') : '(none found)'}`);
    console.error(usage);
    return 1;
  }
  if (list) {
    for (const file of benches) console.log(relative(rootDir, join(benchDir, file)));
    return 0;
  }
  const results: { file: string; code: number; ms: number }[] = [];
  for (const [index, file] of benches.entries()) {
    console.log(`\n=== [${index + 1}/${benches.length}] ${relative(rootDir, join(benchDir, file))} ===\n`);
    const started = performance.now();
    const code = await runBench(file);
    const ms = performance.now() - started;
    results.push({ file, code, ms });
    console.log(`\n--- ${file}: ${code === 0 ? 'done' : `failed (exit ${code})`} in ${formatSeconds(ms)} ---`);
  }
  if (results.length > 1) {
    console.log('\nSummary');
    for (const { file, code, ms } of results) {
      console.log(`  ${code === 0 ? 'ok    ' : 'FAILED'} ${file.padEnd(32)} ${formatSeconds(ms)}`);
    }
  }
  return results.some(({ code }) => code !== 0) ? 1 : 0;
};

process.exitCode = await main();
