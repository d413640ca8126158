// context-ledger/context (src/context/entry.ts): a caller that only projects loads none of zod, ajv, immer, fp-ts or
// level, in a fresh process; zod is loaded only to explain an invalid budget, and the error is the main entry's.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseContextBudget } from '../../src/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const HEAVY = ['zod', 'ajv', 'immer', 'fp-ts', 'level', 'classic-level', 'abstract-level', 'memory-level', 'minisearch'];

// An ESM resolve hook that writes every package it resolves to stderr (synchronously, so in order with the markers).
const hook = `data:text/javascript,${encodeURIComponent(
  "import { writeSync } from 'node:fs'; export async function resolve(s, c, next) { const r = await next(s, c); writeSync(2, 'LOADED ' + r.url + '\\n'); return r; }",
)}`;

/** Runs `body` (ESM, top-level await) in a fresh Node process with tsx; returns the packages loaded before each MARK line. */
const runFresh = (body: string): { phases: Map<string, string[]>; stdout: string } => {
  const entry = pathToFileURL(join(root, 'src', 'context', 'entry.ts')).href;
  const script = [
    "import { register, createRequire } from 'node:module';",
    "import { writeSync } from 'node:fs';",
    `register(${JSON.stringify(hook)});`,
    'const required = () => Object.keys(createRequire(import.meta.url).cache).filter((p) => p.includes("/node_modules/"));',
    "const mark = (name) => writeSync(2, 'MARK ' + name + ' ' + JSON.stringify(required()) + '\\n');",
    `const context = await import(${JSON.stringify(entry)});`,
    "mark('imported');",
    body,
  ].join('\n');
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  const phases = new Map<string, string[]>();
  let loaded = new Set<string>();
  for (const line of run.stderr.split('\n')) {
    const found = /^LOADED .*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(line);
    if (found?.[1]) loaded.add(found[1]);
    const marked = /^MARK (\S+) (.*)$/.exec(line);
    if (marked?.[1] && marked[2]) {
      for (const path of JSON.parse(marked[2]) as string[]) {
        const name = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1];
        if (name) loaded.add(name);
      }
      phases.set(marked[1], [...loaded].filter((name) => HEAVY.includes(name)).sort());
      loaded = new Set(loaded);
    }
  }
  return { phases, stdout: run.stdout };
};

describe('context-ledger/context', () => {
  it('imports and projects with a valid budget without loading zod, ajv, immer, fp-ts or level', () => {
    const { phases, stdout } = runFresh(
      [
        "const items = [context.systemMessage('s'), context.userMessage('a'), context.functionCall('c1', 'ls', {}), context.functionCallOutput('c1', 'x'), context.userMessage('b')];",
        'const projection = new context.DefaultContextProjector().project(items, { maxItems: 3, pinnedPrefixItems: 1, keepToolResultsOf: ["ls"], trimOldReasoning: false });',
        "mark('projected');",
        'console.log(JSON.stringify({ sent: projection.items.length, charsExact: projection.report.sourceApproxChars === context.approxChars(items) }));',
      ].join('\n'),
    );
    expect(phases.get('imported')).toEqual([]);
    expect(phases.get('projected')).toEqual([]);
    expect(JSON.parse(stdout.trim())).toEqual({ sent: 2, charsExact: true });
  });

  it('loads zod only to explain an invalid budget, with the message the main entry gives', () => {
    const bad = { maxItems: 'ten', pinnedPrefixItems: -1, maxItem: 3 };
    const { phases, stdout } = runFresh(
      [
        "mark('before');",
        `try { context.parseContextBudget(${JSON.stringify(bad)}); } catch (error) { console.log(JSON.stringify({ code: error.code, message: error.message, issues: error.issues })); }`,
        "mark('after');",
      ].join('\n'),
    );
    expect(phases.get('before')).toEqual([]);
    expect(phases.get('after')).toEqual(['zod']);
    let expected: unknown;
    try {
      parseContextBudget(bad);
    } catch (error) {
      const { code, message, issues } = error as { code: string; message: string; issues: unknown };
      expected = { code, message, issues };
    }
    expect(expected).toMatchObject({ code: 'INVALID_BUDGET' });
    expect(JSON.parse(stdout.trim())).toEqual(expected);
  });
});
