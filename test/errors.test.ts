// Errors: one base class with a stable code, guards across two copies of the package, every code documented, no plain Error thrown.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import * as adapters from '../src/runtime/adapters/index.js';
import * as root from '../src/index.js';
import * as testing from '../src/testing/index.js';
import * as postgres from '../src/postgres/index.js';
import { ContextLedgerError, errorGuard, isContextLedgerError } from '../src/errors.js';
import { LogInUseError, isLogInUseError, isExpectedSeqConflictError } from '../src/log/index.js';

const srcDir = fileURLToPath(new URL('../src', import.meta.url));
const docsFile = fileURLToPath(new URL('../docs/errors.md', import.meta.url));

const sourceFiles = async (dir: string): Promise<string[]> => {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
};

const codesInSource = async (): Promise<Set<string>> => {
  const codes = new Set<string>();
  for (const file of await sourceFiles(srcDir)) {
    for (const match of (await readFile(file, 'utf8')).matchAll(/declare readonly code: '([A-Z][A-Z0-9_]*)'/g)) codes.add(match[1]!);
  }
  return codes;
};

describe('ContextLedgerError', () => {
  it('is the base of every exported error class, each with its own documented code', async () => {
    const docs = await readFile(docsFile, 'utf8');
    const classes = [root, testing, adapters, postgres].flatMap((mod) =>
      Object.entries(mod).filter(([name, value]) => typeof value === 'function' && /^[A-Z].*Error$/.test(name)),
    ) as [string, { prototype: unknown }][];
    expect(classes.length).toBeGreaterThan(20);
    for (const [name, cls] of classes) {
      expect(cls === ContextLedgerError || cls.prototype instanceof ContextLedgerError, name).toBe(true);
      expect(docs, name).toContain(`\`${name}\``);
    }
    const codes = await codesInSource();
    const documented = new Set([...docs.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]!));
    expect([...codes].sort()).toEqual([...documented].sort());
  });

  it('has a code, a name and a cause, and is recognised by its guard and by the base guard', () => {
    const cause = new Error('EBUSY');
    const error = new LogInUseError('/data/ledger', cause);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe('LOG_IN_USE');
    expect(error.name).toBe('LogInUseError');
    expect(error.cause).toBe(cause);
    expect(isContextLedgerError(error)).toBe(true);
    expect(ContextLedgerError.isInstance(error)).toBe(true);
    expect(isLogInUseError(error)).toBe(true);
    expect(isExpectedSeqConflictError(error)).toBe(false);
    // look-alikes are not ours: the marker is a registered symbol, not a field anyone sets by accident
    for (const other of [new Error('in use'), { code: 'LOG_IN_USE', name: 'LogInUseError' }, null, undefined, 'LOG_IN_USE']) {
      expect(isContextLedgerError(other)).toBe(false);
      expect(isLogInUseError(other)).toBe(false);
    }
    expect(JSON.stringify(Object.keys(error))).not.toContain('context-ledger');
    const isMine = errorGuard<ContextLedgerError>('MINE');
    expect(isMine(new ContextLedgerError('MINE', 'x'))).toBe(true);
  });

  it('guards recognise errors from a second copy of the package, where instanceof does not', async () => {
    vi.resetModules();
    const copy = await import('../src/log/errors.js');
    const copyBase = await import('../src/errors.js');
    expect(copy.LogInUseError).not.toBe(LogInUseError);
    const foreign = new copy.LogInUseError('/elsewhere');
    expect(foreign instanceof LogInUseError).toBe(false);
    expect(foreign instanceof ContextLedgerError).toBe(false);
    expect(isLogInUseError(foreign)).toBe(true);
    expect(isContextLedgerError(foreign)).toBe(true);
    expect(copyBase.isContextLedgerError(new LogInUseError('/here'))).toBe(true);
    expect(copy.isLogInUseError(new LogInUseError('/here'))).toBe(true);
  });

  it('replaces every plain Error, RangeError and TypeError thrown by src/ (test suites in src/testing aside) with a named error', async () => {
    const offenders: string[] = [];
    // src/testing holds test suites for users: their failed assertions may be plain errors
    for (const file of (await sourceFiles(srcDir)).filter((f) => !f.includes(`${srcDir}/testing/`))) {
      const lines = (await readFile(file, 'utf8')).split('\n');
      lines.forEach((line, i) => {
        // Doc comments may show how callers use errors; only code counts.
        if (/^\s*(\*|\/\/)/.test(line)) return;
        if (/new (Error|RangeError|TypeError|SyntaxError)\(/.test(line)) offenders.push(`${file.slice(srcDir.length + 1)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});
