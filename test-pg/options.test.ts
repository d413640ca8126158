// openPostgresLog's options: each bad one is an InvalidOptionsError naming its path, found before any connection is made.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../src/base/errors.js';
import { openPostgresLog, type PostgresLogOptions } from '../src/postgres/index.js';
import { rejectionOf } from '../src/testing/log-contract.js';

// Nothing listens on port 1: an open that got as far as connecting would fail with ECONNREFUSED instead.
const NOWHERE = 'postgresql://nobody@127.0.0.1:1/nothing';

const issuesOf = async (options: unknown): Promise<{ path: string; message: string }[]> => {
  const error = await rejectionOf(openPostgresLog({ connectionString: NOWHERE }, options as PostgresLogOptions));
  expect(error).toBeInstanceOf(InvalidOptionsError);
  expect((error as InvalidOptionsError).optionsOf).toBe('the PostgreSQL log');
  return [...(error as InvalidOptionsError).issues];
};

describe('openPostgresLog options (no server needed)', () => {
  const bad: [string, unknown][] = [
    ['notify', 'false'],
    ['notify', 0],
    ['notify', null],
    ['pollMs', 0],
    ['pollMs', -5],
    ['pollMs', 1.5],
    ['pollMs', Number.NaN],
    ['pollMs', Number.POSITIVE_INFINITY],
    ['pollMs', 2 ** 31],
    ['pollMs', '100'],
    ['poolSize', 1],
    ['poolSize', 0],
    ['poolSize', 2.5],
    ['pageSize', 0],
    ['pageSize', '1000'],
    ['maxGroup', -1],
    ['chainKey', ''],
    ['chainKey', new Uint8Array(0)],
    ['chainKey', 42],
    ['clock', 'now'],
    ['migrate', 'yes'],
  ];
  for (const [path, value] of bad) {
    it(`refuses ${path}: ${typeof value === 'string' ? JSON.stringify(value) : String(value)} with its path`, async () => {
      const issues = await issuesOf({ [path]: value });
      expect(issues.map((i) => i.path)).toEqual([path]);
      expect(issues[0]?.message).toMatch(/must be/);
    });
  }

  it('lists every bad option of one call, and accepts the edges', async () => {
    const issues = await issuesOf({ notify: 'no', pollMs: 0, poolSize: 1, chainKey: '' });
    expect(issues.map((i) => i.path).sort()).toEqual(['chainKey', 'notify', 'pollMs', 'poolSize']);
    expect(issues.find((i) => i.path === 'poolSize')?.message).toMatch(/listens/);
    // the edges pass the check and get as far as connecting (which fails: nothing is there)
    const edge = await rejectionOf(
      openPostgresLog({ connectionString: NOWHERE }, { notify: false, pollMs: 1, poolSize: 2, pageSize: 1, maxGroup: 1, chainKey: 'k' }),
    );
    expect(edge).not.toBeInstanceOf(InvalidOptionsError);
    const max = await rejectionOf(openPostgresLog({ connectionString: NOWHERE }, { pollMs: 2 ** 31 - 1, chainKey: new Uint8Array([1]) }));
    expect(max).not.toBeInstanceOf(InvalidOptionsError);
  });

  it('refuses options that are not an object', async () => {
    expect((await issuesOf(null)).map((i) => i.path)).toEqual(['']);
    expect((await issuesOf('notify')).map((i) => i.path)).toEqual(['']);
  });

  it('refuses a pool of one connection (a subscriber would hold it and every read would wait forever)', async () => {
    const pool = new pg.Pool({ connectionString: NOWHERE, max: 1 });
    try {
      const error = await rejectionOf(openPostgresLog({ pool }));
      expect(error).toBeInstanceOf(InvalidOptionsError);
      expect((error as InvalidOptionsError).issues.map((i) => i.path)).toEqual(['pool']);
      expect(pool.totalCount).toBe(0);
    } finally {
      await pool.end();
    }
  });

  it('leaves a pool it was given untouched when the options are bad', async () => {
    const pool = new pg.Pool({ connectionString: NOWHERE, max: 2 });
    try {
      const error = await rejectionOf(openPostgresLog({ pool }, { notify: 'off' as unknown as boolean }));
      expect(error).toBeInstanceOf(InvalidOptionsError);
      expect(pool.totalCount).toBe(0);
      expect(pool.ended).toBe(false);
    } finally {
      await pool.end();
    }
  });
});
