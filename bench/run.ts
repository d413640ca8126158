// Entry for `npm run bench`: runs every bench/*.bench.ts (or those matching the arguments), each in its own process.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchResult } from './support.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const rootDir = dirname(benchDir);

const usage = `usage: npm run bench [-- [--list] [--quick] NAME...]
  Runs bench/*.bench.ts in sequence, each in its own Node process, then prints their key figures in one table.
  NAME filters by file name (substring, case-insensitive): npm run bench -- projection
  --quick runs every bench small (passed on to each bench; all of them in under 3 minutes).
  --list prints the benches that would run, and runs none.`;

/** Options the runner passes on to every bench. */
const PASSED_ON = new Set(['--quick']);
const OWN = new Set(['--list', '--help', '-h']);

const selectBenches = (filters: readonly string[]): string[] => {
  const all = readdirSync(benchDir)
    .filter((name) => name.endsWith('.bench.ts'))
    .sort();
  if (filters.length === 0) return all;
  const wanted = filters.map((filter) => filter.toLowerCase());
  return all.filter((name) => wanted.some((filter) => name.toLowerCase().includes(filter)));
};

const runBench = (file: string, args: readonly string[], resultsFile: string): Promise<number> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(benchDir, file), ...args], {
      cwd: rootDir,
      stdio: 'inherit',
      env: { ...process.env, BENCH_RESULTS_FILE: resultsFile },
    });
    child.on('error', (error) => {
      console.error(`bench: could not start ${file}: ${error.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });

const formatSeconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

const readResults = (file: string): (BenchResult & { bench: string })[] => {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as BenchResult & { bench: string });
};

const printSummary = (results: readonly { file: string; code: number; ms: number }[], figures: readonly (BenchResult & { bench: string })[]): void => {
  const rows: string[][] = [];
  for (const { file, code, ms } of results) {
    const bench = file.replace(/\.bench\.ts$/, '');
    const own = figures.filter((figure) => figure.bench === bench);
    rows.push([bench, code === 0 ? `done in ${formatSeconds(ms)}` : `FAILED (exit ${code}) after ${formatSeconds(ms)}`, '', '', '', '']);
    for (const figure of own) rows.push(['', figure.measure, figure.value, figure.load ?? '', figure.target, figure.verdict]);
  }
  const header = ['bench', 'measure', 'value', 'load', 'target', ''];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, column) => (column === 2 || column === 3 ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0))).join('  ').trimEnd();
  console.log('\nSummary (load: the 1-minute load average while the figure was measured, on this machine\'s cores; a target set for a larger size than this run\'s prints as informative)');
  console.log(line(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(line(row));
};

const main = async (): Promise<number> => {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usage);
    return 0;
  }
  const unknown = args.filter((arg) => arg.startsWith('-') && !PASSED_ON.has(arg) && !OWN.has(arg));
  if (unknown.length > 0) {
    console.error(`bench: unknown option ${unknown.join(', ')}`);
    console.error(usage);
    return 1;
  }
  const list = args.includes('--list');
  const passedOn = args.filter((arg) => PASSED_ON.has(arg));
  const filters = args.filter((arg) => !arg.startsWith('-'));
  const benches = selectBenches(filters);
  if (benches.length === 0) {
    console.error(`bench: no bench/*.bench.ts matches ${filters.length > 0 ? filters.join(', ') : '(none found)'}`);
    console.error(usage);
    return 1;
  }
  if (list) {
    for (const file of benches) console.log(relative(rootDir, join(benchDir, file)));
    return 0;
  }
  const resultsDir = mkdtempSync(join(tmpdir(), 'context-ledger-bench-'));
  const resultsFile = join(resultsDir, 'results.jsonl');
  const started = performance.now();
  try {
    const results: { file: string; code: number; ms: number }[] = [];
    for (const [index, file] of benches.entries()) {
      console.log(`\n=== [${index + 1}/${benches.length}] ${relative(rootDir, join(benchDir, file))}${passedOn.length > 0 ? ` ${passedOn.join(' ')}` : ''} ===\n`);
      const benchStarted = performance.now();
      const code = await runBench(file, passedOn, resultsFile);
      const ms = performance.now() - benchStarted;
      results.push({ file, code, ms });
      console.log(`\n--- ${file}: ${code === 0 ? 'done' : `failed (exit ${code})`} in ${formatSeconds(ms)} ---`);
    }
    printSummary(results, readResults(resultsFile));
    console.log(`\nall benches: ${formatSeconds(performance.now() - started)}`);
    return results.some(({ code }) => code !== 0) ? 1 : 0;
  } finally {
    rmSync(resultsDir, { recursive: true, force: true });
  }
};

process.exitCode = await main();
