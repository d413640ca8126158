// The source of the worker thread that runs one piece of model code in QuickJS and talks to the host by messages.

/**
 * CommonJS source run with `new Worker(source, { eval: true, workerData: { corePath, variantPath, wasmModule } })`.
 * Host → worker: `start {job}` (one piece of code, when the worker is idle), `result {id, ok, text}`.
 * Worker → host: `ready` (the code starts now), `log {text}`, `cut` (output limit reached),
 * `call {id, name, args}`, `done {ok, value? | message, reusable}`. Each job gets a fresh QuickJS
 * module and memory; `reusable` is false after a failure of the interpreter itself (a trap, the stack),
 * so that worker is not given another job. The guest runs only while the worker drives its job queue.
 */
export const WORKER_SOURCE = String.raw`'use strict';
const { parentPort, workerData: boot } = require('node:worker_threads');
// The library and Emscripten print diagnostics with console.*; none of it belongs in the host's output.
for (const name of ['log', 'info', 'warn', 'error', 'debug', 'trace']) console[name] = () => {};
const core = require(boot.corePath);
const exported = require(boot.variantPath);
const variant = exported.default || exported;
const post = (message) => parentPort.postMessage(message);
let onResult;
parentPort.on('message', (message) => {
  if (!message) return;
  if (message.type === 'start') runJob(message.job);
  else if (message.type === 'result' && onResult) onResult(message);
});
const runJob = (d) => {
  let finished = false;
  const finish = (message, reusable) => {
    if (finished) return;
    finished = true;
    onResult = undefined;
    post({ ...message, reusable });
  };
  const clip = (text) => (text.length > d.outputLimit ? text.slice(0, d.outputLimit) + ' [cut at ' + d.outputLimit + ' characters]' : text);
  const fail = (message, reusable = true) => finish({ type: 'done', ok: false, message: clip(message) }, reusable);
  const OUT_OF_MEMORY = 'code ran out of memory (limit ' + d.memoryLimitBytes + ' bytes)';
  const hostFailure = (error) => {
    const text = error && typeof error.message === 'string' ? error.message : String(error);
    if (error instanceof RangeError && /call stack/i.test(text)) return 'code exceeded the call stack (' + text + ')';
    if (/out of memory|Cannot enlarge memory/i.test(text)) return OUT_OF_MEMORY;
    return 'the sandbox failed: ' + text;
  };
  const run = async () => {
    const wasmMemory = new WebAssembly.Memory({ initial: 256, maximum: d.memoryPages });
    const qjs = await core.newQuickJSAsyncWASMModuleFromVariant(core.newVariant(variant, { wasmModule: boot.wasmModule, wasmMemory }));
    const runtime = qjs.newRuntime();
    runtime.setMemoryLimit(d.memoryLimitBytes);
    const ctx = runtime.newContext();
    const pending = new Map();
    let nextId = 0;
    let outputLeft = d.outputLimit;
    const hostLog = ctx.newFunction('log', (handle) => {
      if (finished || outputLeft <= 0) return ctx.newNumber(0);
      let text = ctx.getString(handle);
      if (text.length > outputLeft) {
        text = text.slice(0, outputLeft);
        outputLeft = 0;
        post({ type: 'log', text });
        post({ type: 'cut' });
        return ctx.newNumber(0);
      }
      outputLeft -= text.length + 1;
      post({ type: 'log', text });
      return ctx.newNumber(1);
    });
    const hostCall = ctx.newFunction('call', (nameHandle, argsHandle) => {
      if (finished) return { error: ctx.newError('the code has ended; tool call not run') };
      const id = ++nextId;
      const deferred = ctx.newPromise();
      pending.set(id, deferred);
      post({ type: 'call', id, name: ctx.getString(nameHandle), args: ctx.getString(argsHandle) });
      return deferred.handle;
    });
    const names = ctx.unwrapResult(ctx.evalCode(JSON.stringify(d.toolNames), 'names.js', { type: 'global' }));
    const prelude = ctx.unwrapResult(ctx.evalCode(d.prelude, 'prelude.js', { type: 'global' }));
    const helpers = ctx.unwrapResult(ctx.callFunction(prelude, ctx.undefined, hostLog, hostCall, names));
    const format = ctx.getProp(helpers, 'format');
    const describe = ctx.getProp(helpers, 'describe');
    const show = (fn, handle) => {
      const shown = ctx.callFunction(fn, ctx.undefined, handle);
      if (shown.error) {
        shown.error.dispose();
        return '[value that cannot be shown]';
      }
      const text = ctx.getString(shown.value);
      shown.value.dispose();
      return text;
    };
    const failWith = (errorHandle) => {
      const text = show(describe, errorHandle);
      fail(text === 'InternalError: out of memory' ? OUT_OF_MEMORY : text);
    };
    post({ type: 'ready' });
    const started = ctx.evalCode('(async () => {\n' + d.code + '\n})()', 'codeact.js', { type: 'global' });
    if (started.error) return failWith(started.error);
    const promise = started.value;
    const settle = () => {
      if (finished) return;
      const jobs = runtime.executePendingJobs();
      if (jobs.error) return failWith(jobs.error);
      const state = ctx.getPromiseState(promise);
      if (state.type === 'fulfilled') {
        const value = ctx.typeof(state.value) === 'undefined' ? undefined : clip(show(format, state.value));
        return finish({ type: 'done', ok: true, value }, true);
      }
      if (state.type === 'rejected') return failWith(state.error);
      if (pending.size === 0) fail('the code awaits a promise that nothing will settle (the sandbox has no timers, and no tool call is running)');
    };
    onResult = (message) => {
      const deferred = pending.get(message.id);
      if (finished || !deferred) return;
      pending.delete(message.id);
      try {
        if (message.ok && message.text.length * 2 > d.memoryLimitBytes / 2) {
          const error = ctx.newError('tool output too large for the sandbox (' + message.text.length + ' characters)');
          deferred.reject(error);
          error.dispose();
        } else if (message.ok) {
          const value = ctx.newString(message.text);
          deferred.resolve(value);
          value.dispose();
        } else {
          const error = ctx.newError(message.text);
          deferred.reject(error);
          error.dispose();
        }
        settle();
      } catch (error) {
        fail(hostFailure(error), false);
      }
    };
    settle();
  };
  run().catch((error) => fail(hostFailure(error), false));
};
`;
