// Checks at a bridge's edge: what a framework hands over is refused by name (BridgeInputError, with its path), never a raw TypeError.
import { BridgeInputError } from '../../base/errors.js';
import { canonicalJson } from '../../base/index.js';

type Json = Record<string, unknown>;

/** How a value is named in an error message: `null`, `an array`, `a string`, `undefined`, ... */
export const kindOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : value === undefined ? 'undefined' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;

const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The checks of one bridge operation (`fromModelMessages`, `LedgerSession.addItems`, ...): each throws a {@link BridgeInputError} naming the path. */
export interface InputChecks {
  /** Throws for the element at `index` (`path` under it, e.g. `.content[0].toolCallId`). */
  fail(index: number | undefined, path: string, problem: string): never;
  /** The input itself must be an array. */
  list(value: unknown, what: string): readonly unknown[];
  /** `value` (element `index`, at `path`) must be a plain object. */
  record(value: unknown, index: number | undefined, path: string): Json;
  /** `record[key]` must be a string. */
  string(record: Json, key: string, index: number | undefined, path: string): string;
}

/** The checks of one operation of one bridge. */
export const inputChecks = (bridge: string, operation: string): InputChecks => {
  const fail = (index: number | undefined, path: string, problem: string): never => {
    throw new BridgeInputError(bridge, operation, index, index === undefined ? path : `[${index}]${path}`, problem);
  };
  return {
    fail,
    list(value, what) {
      if (!Array.isArray(value)) fail(undefined, '', `must be an array of ${what}, got ${kindOf(value)}`);
      return value as readonly unknown[];
    },
    record(value, index, path) {
      if (!isRecord(value)) fail(index, path, `must be an object, got ${kindOf(value)}`);
      return value as Json;
    },
    string(record, key, index, path) {
      const value = record[key];
      if (typeof value !== 'string') fail(index, `${path}.${key}`, `must be a string, got ${kindOf(value)}`);
      return value as string;
    },
  };
};

/**
 * Memory items handed to a `to…` converter: an array of objects with a string `type`, whose tool calls and outputs
 * have a string `call_id` (one without would be left out in silence, or sent without the id the provider pairs it by).
 */
export const checkMemoryItems = (checks: InputChecks, items: unknown): readonly Json[] => {
  const list = checks.list(items, 'memory items');
  list.forEach((raw, index) => {
    const item = checks.record(raw, index, '');
    checks.string(item, 'type', index, '');
    if (item['type'] === 'function_call' || item['type'] === 'function_call_output') checks.string(item, 'call_id', index, '');
    if (item['type'] === 'message') {
      checks.string(item, 'role', index, '');
      const content = item['content'];
      if (typeof content !== 'string' && !Array.isArray(content)) checks.fail(index, '.content', `must be a string or an array of parts, got ${kindOf(content)}`);
      const calls = item['tool_calls'];
      if (calls !== undefined) {
        if (!Array.isArray(calls)) checks.fail(index, '.tool_calls', `must be an array, got ${kindOf(calls)}`);
        (calls as unknown[]).forEach((call, c) => checks.string(checks.record(call, index, `.tool_calls[${c}]`), 'id', index, `.tool_calls[${c}]`));
      }
    }
  });
  return list as readonly Json[];
};

/**
 * Whether two texts say the same: equal, or both JSON with the same canonical form. The log stores canonical JSON (keys
 * sorted), so an object kept beside its text comes back with its keys in another order than the text was written in.
 */
export const sameText = (a: string, b: string): boolean => {
  if (a === b) return true;
  try {
    return canonicalJson(JSON.parse(a)) === canonicalJson(JSON.parse(b));
  } catch {
    return false;
  }
};
