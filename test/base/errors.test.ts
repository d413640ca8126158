// Errors: one base class with a stable code, isInstance across two copies of the package, every code documented, no plain Error thrown.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import * as adapters from '../../src/adapters/index.js';
import * as root from '../../src/index.js';
import * as testing from '../../src/testing/index.js';
import * as postgres from '../../src/postgres/index.js';
import { ContextLedgerError, InvalidOptionsError, isContextLedgerError } from '../../src/base/errors.js';
import { ChainBrokenError, LogInUseError, isLogInUseError, isExpectedSeqConflictError } from '../../src/log/index.js';
import { ContextOverflowError } from '../../src/model/index.js';
import { collectErrorClasses, errorsDocFromClasses } from '../../scripts/errors-doc.js';

const srcDir = fileURLToPath(new URL('../../src', import.meta.url));
const docsFile = fileURLToPath(new URL('../../docs/errors.md', import.meta.url));

const sourceFiles = async (dir: string): Promise<string[]> => {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
};

type ErrorClass = typeof ContextLedgerError & { readonly prototype: ContextLedgerError };

/** Every exported error class, by its exported name. */
const exportedErrorClasses = (): [string, ErrorClass][] =>
  [root, testing, adapters, postgres].flatMap((mod) =>
    Object.entries(mod).filter(([name, value]) => typeof value === 'function' && /^[A-Z].*Error$/.test(name)),
  ) as [string, ErrorClass][];

/** An error of class `cls` as another copy of the package would make it: the marker, the code, the class's prototype. */
const madeBy = (cls: ErrorClass): ContextLedgerError => {
  const error = Object.create(cls.prototype) as ContextLedgerError;
  Object.defineProperty(error, 'code', { value: cls.code, enumerable: true });
  Object.defineProperty(error, Symbol.for('context-ledger.error'), { value: true });
  return error;
};

describe('ContextLedgerError', () => {
  it('is the base of every exported error class, each with its own documented code, declared once as a static', async () => {
    const docs = await readFile(docsFile, 'utf8');
    const classes = exportedErrorClasses();
    expect(classes.length).toBeGreaterThan(20);
    for (const [name, cls] of classes) {
      expect(cls === ContextLedgerError || cls.prototype instanceof ContextLedgerError, name).toBe(true);
      expect(docs, name).toContain(`\`${name}\``);
      if (cls !== ContextLedgerError) expect(Object.prototype.hasOwnProperty.call(cls, 'code') && typeof cls.code === 'string', `${name}.code`).toBe(true);
    }
    const { classes: declared, problems } = collectErrorClasses();
    expect(problems).toEqual([]);
    const documented = new Set([...docs.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]!));
    expect(declared.map((c) => c.code).sort()).toEqual([...documented].sort());
    // the page's tables are what the classes make (`npm run errors:update`)
    expect(errorsDocFromClasses(docs, declared)).toBe(docs);
  });

  it('has a code, a name and a cause, and is recognised by its class, the base class and its deprecated guard', () => {
    const cause = new Error('EBUSY');
    const error = new LogInUseError('/data/ledger', cause);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe('LOG_IN_USE');
    expect(LogInUseError.code).toBe('LOG_IN_USE');
    expect(error.name).toBe('LogInUseError');
    expect(error.stack?.startsWith('LogInUseError: the log at /data/ledger is in use')).toBe(true);
    expect(error.cause).toBe(cause);
    expect(LogInUseError.isInstance(error)).toBe(true);
    expect(ContextLedgerError.isInstance(error)).toBe(true);
    expect(ChainBrokenError.isInstance(error)).toBe(false);
    expect(isContextLedgerError(error)).toBe(true);
    expect(isLogInUseError(error)).toBe(true);
    expect(isExpectedSeqConflictError(error)).toBe(false);
    // look-alikes are not ours: the marker is a registered symbol, not a field anyone sets by accident
    for (const other of [new Error('in use'), { code: 'LOG_IN_USE', name: 'LogInUseError' }, null, undefined, 'LOG_IN_USE', 7, () => 'LOG_IN_USE']) {
      expect(ContextLedgerError.isInstance(other)).toBe(false);
      expect(LogInUseError.isInstance(other)).toBe(false);
      expect(isContextLedgerError(other)).toBe(false);
      expect(isLogInUseError(other)).toBe(false);
    }
    expect(Object.keys(error)).not.toContain('_tag');
    expect(JSON.stringify(Object.keys(error))).not.toContain('context-ledger');
  });

  it("types each class's static code as its literal, and isInstance narrows to the class it is called on", () => {
    const error: unknown = new LogInUseError('/x');
    expectTypeOf<typeof LogInUseError.code>().toEqualTypeOf<'LOG_IN_USE'>();
    expectTypeOf(new LogInUseError('/x').code).toEqualTypeOf<string>();
    if (!LogInUseError.isInstance(error)) throw new Error('not recognised');
    expectTypeOf(error).toEqualTypeOf<LogInUseError>();
    expect(error.path).toBe('/x');
  });

  it('wires every deprecated is…Error guard to its own class: true for that class, false for every other', () => {
    const classes = exportedErrorClasses().filter(([, cls]) => cls !== ContextLedgerError);
    const modules = [root, testing, adapters, postgres] as Record<string, unknown>[];
    let guards = 0;
    for (const [name, cls] of classes) {
      const guard = modules.map((mod) => mod[`is${name}`]).find((g) => g !== undefined) as ((e: unknown) => boolean) | undefined;
      if (guard === undefined) continue;
      guards += 1;
      for (const [otherName, other] of classes) {
        const error = madeBy(other);
        expect(guard(error), `is${name}(${otherName})`).toBe(other === cls);
        expect(cls.isInstance(error), `${name}.isInstance(${otherName})`).toBe(other === cls);
      }
      expect(isContextLedgerError(madeBy(cls))).toBe(true);
    }
    expect(guards).toBeGreaterThan(50);
  });

  it('isInstance is true for the class and the classes that extend it, and only those', () => {
    // TypeScript keeps a subclass to its parent's code (a literal type); JavaScript, or a later version of a class, may not
    // @ts-expect-error the static side's code is 'CONTEXT_OVERFLOW'
    class ProviderOverflowError extends ContextOverflowError {
      static override readonly code = 'PROVIDER_OVERFLOW';
    }
    /** Declares no code of its own: told by instanceof. */
    class QuietOverflowError extends ContextOverflowError {}
    const base = new ContextOverflowError('too long');
    const sub = new ProviderOverflowError('too long for the provider');
    const quiet = new QuietOverflowError('quietly too long');
    expect([sub.code, sub.name, sub.message]).toEqual(['PROVIDER_OVERFLOW', 'ProviderOverflowError', 'too long for the provider']);
    expect(quiet.name).toBe('QuietOverflowError');
    expect(quiet.code).toBe('CONTEXT_OVERFLOW');
    expect(ContextOverflowError.isInstance(sub)).toBe(true);
    expect(ContextOverflowError.isInstance(quiet)).toBe(true);
    expect(ProviderOverflowError.isInstance(sub)).toBe(true);
    expect(ProviderOverflowError.isInstance(base)).toBe(false);
    expect(QuietOverflowError.isInstance(quiet)).toBe(true);
    expect(QuietOverflowError.isInstance(base)).toBe(false);
    expect(QuietOverflowError.isInstance(sub)).toBe(false);
    expect(LogInUseError.isInstance(sub)).toBe(false);
    expect(ContextLedgerError.isInstance(sub)).toBe(true);
  });

  it('takes an error of its own: a class with a static code, or the code given to the constructor', () => {
    class QuotaError extends ContextLedgerError {
      static override readonly code = 'MY_APP_QUOTA';
      constructor(readonly userId: string) {
        super(`user ${userId} is over quota`, { cause: 'billing' });
      }
    }
    const quota = new QuotaError('u-1');
    expect([quota.code, quota.message, quota.name, quota.cause]).toEqual(['MY_APP_QUOTA', 'user u-1 is over quota', 'QuotaError', 'billing']);
    expect(QuotaError.isInstance(quota)).toBe(true);
    expect(ContextLedgerError.isInstance(quota)).toBe(true);
    expect(LogInUseError.isInstance(quota)).toBe(false);
    // the code as the constructor's first argument, as before codes were statics
    const mine = new ContextLedgerError('MINE', 'x', { cause: 1 });
    expect([mine.code, mine.message, mine.name, mine.cause]).toEqual(['MINE', 'x', 'ContextLedgerError', 1]);
    expect(ContextLedgerError.isInstance(mine)).toBe(true);
    class LegacyError extends ContextLedgerError {
      constructor() {
        super('LEGACY', 'made the old way');
      }
    }
    expect(new LegacyError().code).toBe('LEGACY');
    expect(LegacyError.isInstance(new LegacyError())).toBe(true);
    expect(LegacyError.isInstance(mine)).toBe(false);
  });

  it('refuses an error without a code, and isInstance called without its class, rather than answering wrong', () => {
    expect(() => new ContextLedgerError('a message and no code')).toThrow(InvalidOptionsError);
    expect(() => new ContextLedgerError('a message and no code')).toThrow(/an error class needs a code/);
    class CodelessError extends ContextLedgerError {}
    expect(() => new CodelessError('no code')).toThrow(/invalid options for CodelessError: code: an error class needs a code/);
    // a class with a code takes (message, options): another code given as the first argument is refused
    const Recorded = root.RecordedError as unknown as new (code: string, message: string) => ContextLedgerError;
    expect(() => new Recorded('OTHER_CODE', 'a message')).toThrow(/invalid options for RecordedError: code: its code is RECORDED_ERROR; pass \(message, options\), not "OTHER_CODE"/);
    expect(new Recorded('RECORDED_ERROR', 'the same code').code).toBe('RECORDED_ERROR');
    expect(new root.RecordedError('a recorded message', { cause: 'x' })).toMatchObject({ code: 'RECORDED_ERROR', name: 'RecordedError', message: 'a recorded message', cause: 'x' });
    const errors: unknown[] = [new LogInUseError('/x')];
    // a static method passed on as a function loses its class: say so instead of answering false
    expect(() => errors.filter(LogInUseError.isInstance)).toThrow(/called without its class/);
    expect(errors.filter((e) => LogInUseError.isInstance(e))).toHaveLength(1);
  });

  it('answers false, never throws, for a proxy whose traps throw', () => {
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
      },
    );
    const real = new ContextOverflowError('too long');
    const noPrototype = new Proxy(real, {
      getPrototypeOf: () => {
        throw new Error('trap');
      },
    });
    expect(ContextLedgerError.isInstance(hostile)).toBe(false);
    expect(ContextOverflowError.isInstance(hostile)).toBe(false);
    expect(LogInUseError.isInstance(noPrototype)).toBe(false);
    expect(ContextOverflowError.isInstance(noPrototype)).toBe(true);
  });

  it('isInstance recognises errors from a second copy of the package, where instanceof does not', async () => {
    vi.resetModules();
    const copy = await import('../../src/log/errors.js');
    const copyModel = await import('../../src/model/index.js');
    const copyBase = await import('../../src/base/errors.js');
    expect(copy.LogInUseError).not.toBe(LogInUseError);
    const foreign = new copy.LogInUseError('/elsewhere');
    expect(foreign instanceof LogInUseError).toBe(false);
    expect(foreign instanceof ContextLedgerError).toBe(false);
    expect(LogInUseError.isInstance(foreign)).toBe(true);
    expect(ContextLedgerError.isInstance(foreign)).toBe(true);
    expect(ChainBrokenError.isInstance(foreign)).toBe(false);
    expect(isLogInUseError(foreign)).toBe(true);
    expect(isContextLedgerError(foreign)).toBe(true);
    expect(copyBase.ContextLedgerError.isInstance(new LogInUseError('/here'))).toBe(true);
    expect(copy.LogInUseError.isInstance(new LogInUseError('/here'))).toBe(true);
    expect(copy.isLogInUseError(new LogInUseError('/here'))).toBe(true);
    // a subclass with its own code, over the other copy's class: still one of that class's errors here
    // @ts-expect-error the static side's code is 'CONTEXT_OVERFLOW' (see above)
    class ForeignProviderOverflowError extends copyModel.ContextOverflowError {
      static override readonly code = 'PROVIDER_OVERFLOW';
    }
    expect(ContextOverflowError.isInstance(new ForeignProviderOverflowError('too long'))).toBe(true);
    expect(LogInUseError.isInstance(new ForeignProviderOverflowError('too long'))).toBe(false);
  });

  it('isInstance recognises an error from an older copy that has the marker and the code but no static code', () => {
    const older = Object.assign(new Error('the log at /old is in use'), { code: 'LOG_IN_USE', name: 'LogInUseError' });
    Object.defineProperty(older, Symbol.for('context-ledger.error'), { value: true });
    expect(LogInUseError.isInstance(older)).toBe(true);
    expect(ContextLedgerError.isInstance(older)).toBe(true);
    expect(ContextOverflowError.isInstance(older)).toBe(false);
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
