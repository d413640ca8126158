// The SDK matrix: each optional peer SDK at the oldest and the newest version of every alternative of its peer range
// (package.json's peerDependencies, e.g. `^6.0.0 || ^7.0.0` gives 6.0.0, 6.latest, 7.0.0, 7.latest), installed one at a
// time into a throwaway copy of the project, with the adapters' and bridges' loopback tests run against it. The
// project's own node_modules is never touched: the copy gets `npm ci`, then `npm install --no-save NAME@VERSION` per
// entry (each such install puts the lockfile's tree back, with that one package changed). An entry whose version is
// the lockfile's is not run again: `npm test` runs these files against it.
// Prints one line per entry and, last, `N passed, N failed[, N skipped]` summed over the entries (.ci/run reads it).
// Then the sources are type-checked against the newest version of every SDK at once (one check: 1 passed or 1 failed).
// Usage: npm run test:sdk-matrix [-- NAME...]   (only these SDKs, e.g. `-- ai openai`); SDK_MATRIX_KEEP=1 keeps the copy.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The test files that run each SDK: those that import it (or a module of ours that imports it at run time) and send
 * it requests over loopback or run it on mock models. The property tests load the bridge modules (and so the SDK)
 * but check our conversions; they are cheap and keep the bridges' laws in view of every version.
 */
const suites: Record<string, readonly string[]> = {
  openai: [
    'test/adapters/adapters.test.ts',
    'test/adapters/adapters-stream.test.ts',
    'test/runtime/abort-listeners.test.ts',
    'test/runtime/context-overflow.test.ts',
    'test/model/model-client-contract.test.ts',
    'test/bridges/openai-agents.test.ts',
    'test/compact/provider-compact.test.ts',
    'test/runtime/stream-overflow.test.ts',
    'property-tests/request-budget.test.ts',
  ],
  '@anthropic-ai/sdk': [
    'test/adapters/adapters.test.ts',
    'test/adapters/adapters-stream.test.ts',
    'test/runtime/abort-listeners.test.ts',
    'test/adapters/anthropic-first-turn.test.ts',
    'test/adapters/anthropic-token-count.test.ts',
    'test/runtime/context-overflow.test.ts',
    'test/model/model-client-contract.test.ts',
    'test/compact/provider-compact.test.ts',
    'test/runtime/stream-overflow.test.ts',
  ],
  ai: [
    'test/bridges/ai-sdk.test.ts',
    'test/bridges/ai-sdk-stream.test.ts',
    'test/bridges/multi-result-pairing.test.ts',
    'test/bridges/ai-sdk-peer-cases.test.ts',
    'test/bridges/bridge-input-errors.test.ts',
    'test/runtime/context-overflow.test.ts',
    'property-tests/ai-sdk-messages.test.ts',
  ],
  '@openai/agents': [
    'test/bridges/openai-agents.test.ts',
    'test/bridges/multi-result-pairing.test.ts',
    'test/bridges/openai-agents-guardrail-session.test.ts',
    'test/bridges/openai-agents-history.test.ts',
    'property-tests/openai-agents-items.test.ts',
  ],
  '@langchain/core': ['test/bridges/langchain.test.ts', 'test/bridges/langchain-trim-peer-cases.test.ts', 'test/bridges/bridge-input-errors.test.ts'],
};

/**
 * Packages an SDK depends on that the tests also import: when the SDK's version needs another major of one (agents
 * 0.15+ need openai 7) npm nests a second copy under it; the entry then installs the nested version at the top, so
 * the tests and the SDK share one, as in a user's project.
 */
const shared: Record<string, readonly string[]> = { '@openai/agents': ['openai'] };

interface Entry {
  readonly name: string;
  readonly range: string;
  readonly version: string;
  readonly which: 'oldest' | 'newest' | 'only';
}

interface Totals {
  passed: number;
  failed: number;
  skipped: number;
}

const run = (command: string, args: readonly string[], cwd: string, log?: string): { status: number; output: string } => {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`;
  if (log) writeFileSync(log, `$ ${command} ${args.join(' ')}\n${output}`, { flag: 'a' });
  return { status: result.status ?? 1, output };
};

const fail = (message: string): never => {
  process.stderr.write(`sdk-matrix: ${message}\n`);
  process.exit(1);
};

/** x.y.z as numbers, for ordering release versions. */
const parts = (version: string): number[] => version.split('.').map((n) => Number(n));
const compareVersions = (a: string, b: string): number => {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
};

/** The released versions of `name` in `range`, oldest first (from the registry). */
const versionsIn = (name: string, range: string): string[] => {
  const { status, output } = run('npm', ['view', `${name}@${range}`, 'version', '--json'], root);
  if (status !== 0) fail(`npm view ${name}@${range} failed:\n${output}`);
  const parsed = JSON.parse(output) as string | string[];
  return (Array.isArray(parsed) ? parsed : [parsed]).filter((v) => /^\d+\.\d+\.\d+$/.test(v)).sort(compareVersions);
};

const entriesOf = (name: string, peerRange: string): Entry[] => {
  const entries: Entry[] = [];
  for (const range of peerRange.split('||').map((r) => r.trim())) {
    const versions = versionsIn(name, range);
    const oldest = versions[0];
    const newest = versions.at(-1);
    if (oldest === undefined || newest === undefined) fail(`no released version of ${name} in ${range}`);
    if (oldest === newest) entries.push({ name, range, version: oldest!, which: 'only' });
    else entries.push({ name, range, version: oldest!, which: 'oldest' }, { name, range, version: newest!, which: 'newest' });
  }
  return entries;
};

/** The project's files (tracked, and untracked but not ignored) copied into `dir`: no node_modules, no dist. */
const copyProject = (dir: string): void => {
  const { status, output } = run('git', ['ls-files', '-co', '--exclude-standard', '-z'], root);
  if (status !== 0) fail(`git ls-files failed:\n${output}`);
  for (const file of output.split('\0').filter((f) => f.length > 0)) {
    const from = join(root, file);
    if (!existsSync(from)) continue; // deleted in the work tree, not yet in the index
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(from, join(dir, file));
  }
};

const installedPackage = (dir: string, name: string): { version: string; engines?: { node?: string } } | undefined => {
  const file = join(dir, 'node_modules', name, 'package.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string; engines?: { node?: string } }) : undefined;
};

/** Versions of `dependency` that npm nested under the SDK's packages (a second copy beside the top one). */
const nestedVersions = (dir: string, name: string, dependency: string): string[] => {
  const scope = name.startsWith('@') ? name.split('/')[0]! : undefined;
  const candidates = scope ? readdirSync(join(dir, 'node_modules', scope)).map((p) => `${scope}/${p}`) : [name];
  const found = new Set<string>();
  for (const pkg of candidates.filter((p) => p === name || p.startsWith(`${name}-`))) {
    const nested = installedPackage(join(dir, 'node_modules', pkg), dependency);
    if (nested) found.add(nested.version);
  }
  return [...found];
};

const summaryOf = (output: string): Totals | undefined => {
  const lines = output.split('\n').filter((l) => /^\d+ passed, \d+ failed/.test(l));
  const line = lines.at(-1);
  if (!line) return undefined;
  const [, p, f] = /^(\d+) passed, (\d+) failed/.exec(line)!;
  const s = /, (\d+) skipped/.exec(line)?.[1];
  return { passed: Number(p), failed: Number(f), skipped: Number(s ?? 0) };
};

/**
 * Test files that load an SDK by value (not `import type`) but are missing from its list: a new test of an adapter
 * or bridge would otherwise never meet the other versions.
 */
const unlisted = (): string[] => {
  const { output } = run('git', ['ls-files', '-co', '--exclude-standard', 'test', 'property-tests'], root);
  const missing: string[] = [];
  for (const file of output.split('\n').filter((f) => f.endsWith('.test.ts') && existsSync(join(root, f)))) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const name of Object.keys(suites)) {
      const quoted = `'${name}(?:/[^']*)?'`;
      const loads = new RegExp(`^import (?!type )[^;]*from ${quoted}|import\\(${quoted}\\)`, 'm').test(text);
      if (loads && !suites[name]!.includes(file)) missing.push(`${file} (loads ${name})`);
    }
  }
  return missing;
};

const formatTotals = (t: Totals): string => `${t.passed} passed, ${t.failed} failed${t.skipped > 0 ? `, ${t.skipped} skipped` : ''}`;

const main = (): void => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
  const only = process.argv.slice(2);
  const unknown = only.filter((n) => !(n in suites));
  if (unknown.length > 0) fail(`unknown SDK ${unknown.join(', ')}; known: ${Object.keys(suites).join(', ')}`);
  const names = Object.keys(suites).filter((n) => only.length === 0 || only.includes(n));
  for (const name of names) if (!pkg.peerDependencies[name]) fail(`${name} is not a peer dependency in package.json`);
  const absent = names.flatMap((name) => suites[name]!.filter((file) => !existsSync(join(root, file))));
  if (absent.length > 0) fail(`listed test files that do not exist: ${absent.join(', ')}`);
  const missing = unlisted();
  if (missing.length > 0) fail(`test files that load an SDK but are not in its list in scripts/sdk-matrix.ts: ${missing.join(', ')}`);

  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), 'sdk-matrix-'));
  const dir = join(work, 'project');
  const log = join(work, 'matrix.log');
  const cleanup = (): void => {
    if (process.env['SDK_MATRIX_KEEP'] === '1') process.stdout.write(`(kept ${work})\n`);
    else rmSync(work, { recursive: true, force: true });
  };
  process.on('exit', cleanup);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

  const entries = names.flatMap((name) => entriesOf(name, pkg.peerDependencies[name]!));
  process.stdout.write(`== sdk-matrix on Node ${process.versions.node}: ${entries.length} entries (versions from the registry in ${Math.round((Date.now() - started) / 1000)} s)\n`);
  copyProject(dir);
  const ciStarted = Date.now();
  const ci = run('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], dir, log);
  if (ci.status !== 0) fail(`npm ci in the copy failed:\n${ci.output}`);
  process.stdout.write(`-- copy at ${dir}, npm ci in ${Math.round((Date.now() - ciStarted) / 1000)} s\n`);

  const totals: Totals = { passed: 0, failed: 0, skipped: 0 };
  const npmInstall = ['install', '--no-save', '--no-audit', '--no-fund', '--prefer-offline', '--engine-strict=false'];
  const locked = Object.fromEntries(names.map((name) => [name, installedPackage(dir, name)?.version]));
  for (const entry of entries) {
    const t0 = Date.now();
    const spec = `${entry.name}@${entry.version}`;
    const label = `${spec} (${entry.which} of ${entry.range})`;
    if (locked[entry.name] === entry.version) {
      process.stdout.write(`${label}: the lockfile's version, run by npm test\n`);
      continue;
    }
    let install = run('npm', [...npmInstall, spec], dir, log);
    const alongside: string[] = [];
    for (const dependency of shared[entry.name] ?? []) {
      const nested = nestedVersions(dir, entry.name, dependency);
      if (nested.length === 1) alongside.push(`${dependency}@${nested[0]}`);
      else if (nested.length > 1) fail(`${spec} nests ${dependency} ${nested.join(', ')}`);
    }
    if (install.status === 0 && alongside.length > 0) install = run('npm', [...npmInstall, spec, ...alongside], dir, log);
    const installed = installedPackage(dir, entry.name);
    if (install.status !== 0 || installed?.version !== entry.version) {
      process.stdout.write(`${label}: install failed (installed: ${installed?.version ?? 'none'})\n${install.output.split('\n').slice(-30).join('\n')}\n`);
      totals.failed += 1;
      continue;
    }
    // The tests read the installed version themselves (test/support/ai-sdk-under-test.ts), so nothing is passed.
    const files = suites[entry.name]!;
    const tests = run('npx', ['vitest', 'run', ...files], dir, log);
    const summary = summaryOf(tests.output);
    const engines = installed.engines?.node ? `, engines node ${installed.engines.node}` : '';
    const also = alongside
      .map((spec) => {
        const name = spec.slice(0, spec.lastIndexOf('@'));
        const node = installedPackage(dir, name)?.engines?.node;
        return `, with ${spec}${node ? ` (engines node ${node})` : ''}`;
      })
      .join('');
    const seconds = Math.round((Date.now() - t0) / 1000);
    if (!summary) {
      process.stdout.write(`${label}: vitest printed no summary line (exit ${tests.status})\n${tests.output.split('\n').slice(-40).join('\n')}\n`);
      totals.failed += 1;
      continue;
    }
    if (summary.failed > 0 || tests.status !== 0) process.stdout.write(`${tests.output.split('\n').slice(-80).join('\n')}\n`);
    totals.passed += summary.passed;
    totals.failed += summary.failed > 0 || tests.status === 0 ? summary.failed : 1;
    totals.skipped += summary.skipped;
    process.stdout.write(`${label}: ${formatTotals(summary)} (${files.length} file${files.length === 1 ? '' : 's'}${also}${engines}; ${seconds} s)\n`);
  }

  // The declarations users compile against their SDKs: the sources type-checked with the newest of every SDK at once.
  if (names.length === Object.keys(suites).length) {
    const t0 = Date.now();
    const newest = names.map((name) => entries.filter((e) => e.name === name).at(-1)!).map((e) => `${e.name}@${e.version}`);
    const install = run('npm', [...npmInstall, ...newest], dir, log);
    const tsc = install.status === 0 ? run('npx', ['tsc', '-p', 'tsconfig.build.json', '--noEmit'], dir, log) : install;
    const ok = tsc.status === 0;
    if (!ok) process.stdout.write(`${tsc.output.split('\n').slice(-40).join('\n')}\n`);
    if (ok) totals.passed += 1;
    else totals.failed += 1;
    process.stdout.write(`types of src against ${newest.join(' ')}: ${ok ? '1 passed, 0 failed' : '0 passed, 1 failed'} (${Math.round((Date.now() - t0) / 1000)} s)\n`);
  }

  process.stdout.write(`\n== sdk-matrix done in ${Math.round((Date.now() - started) / 1000)} s (log: ${process.env['SDK_MATRIX_KEEP'] === '1' ? log : 'removed'})\n`);
  process.stdout.write(`${formatTotals(totals)}\n`);
  process.exitCode = totals.failed > 0 ? 1 : 0;
};

main();
