// The JavaScript that sets up the guest's `console` and `tools` inside QuickJS before the model's code runs.

/**
 * Evaluated in the guest: a function of (hostLog, hostCall, toolNames) that installs `console` and
 * `tools` and returns `{ format, describe }` (how values and errors are shown). `hostLog` returns 0 once the output
 * limit is reached, and console calls stop crossing to the host. It keeps its own
 * references to the built-ins it uses, so code that replaces them later cannot change what it does.
 */
export const GUEST_PRELUDE = String.raw`(function (hostLog, hostCall, names) {
  'use strict';
  const stringify = JSON.stringify;
  const toText = String;
  const ErrorType = Error;
  const freeze = Object.freeze;
  const map = Array.prototype.map;
  const join = Array.prototype.join;
  const call = Function.prototype.call;
  const invoke = (fn, self, ...args) => call.apply(fn, [self, ...args]);
  const safe = (fn) => { try { return fn(); } catch (e) { return '[value that cannot be shown]'; } };
  const describe = (e) => safe(() => {
    if (e !== null && typeof e === 'object' && typeof e.message === 'string') {
      const name = typeof e.name === 'string' ? e.name : '';
      return name && name !== 'Error' ? name + ': ' + e.message : e.message;
    }
    return format(e);
  });
  const format = (v) => safe(() => {
    if (typeof v === 'string') return v;
    if (v === undefined) return 'undefined';
    if (typeof v === 'function') return '[Function' + (v.name ? ': ' + v.name : ' (anonymous)') + ']';
    if (typeof v === 'bigint') return toText(v) + 'n';
    if (typeof v === 'symbol') return toText(v);
    if (v instanceof ErrorType) return describe(v);
    try {
      const json = stringify(v);
      return json === undefined ? toText(v) : json;
    } catch (e) {
      return toText(v);
    }
  });
  let full = false;
  const log = (...args) => {
    if (full) return;
    if (hostLog(invoke(join, invoke(map, args, (a) => format(a)), ' ')) === 0) full = true;
  };
  globalThis.console = freeze({ log, info: log, warn: log, error: log, debug: log });
  const tools = {};
  const define = Object.defineProperty;
  for (const name of names) {
    const tool = (args) => {
      const json = stringify(args === undefined ? {} : args);
      return hostCall(name, json === undefined ? 'null' : json);
    };
    define(tools, name, { value: tool, enumerable: true });
  }
  globalThis.tools = freeze(tools);
  return freeze({ format, describe });
})`;
