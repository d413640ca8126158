// Runs one piece of model code in a QuickJS worker: host-side deadline, one tool call at a time, nothing after the end.
import type { Worker } from 'node:worker_threads';
import { errorText } from '../../events/index.js';
import { CodeExecutionError } from '../errors.js';
import { GUEST_PRELUDE } from './guest-prelude.js';
import { loadCodeSandbox, type CodeSandboxRuntime } from './load.js';
import { CODE_OUTPUT_LIMIT_CHARS, type ResolvedCodeActLimits } from './options.js';
import { acquireWorker, releaseWorker } from './worker-pool.js';

/** Calls a tool for the code; rejects with the tool's error. `signal` aborts when the code's run ends early. */
export type SandboxToolCaller = (name: string, args: unknown, options: { readonly signal: AbortSignal }) => Promise<string>;

export interface SandboxRequest extends ResolvedCodeActLimits {
  readonly code: string;
  readonly toolNames: readonly string[];
  readonly callTool: SandboxToolCaller;
  /** The run's signal: aborting it ends the code like the deadline does. */
  readonly signal?: AbortSignal;
}

export interface SandboxOutcome {
  /** Console lines, then `=> value` when the code returned something. */
  readonly output: string;
  /** The reason the code failed (thrown error, timeout, memory), or undefined when it returned. */
  readonly error?: string;
}

/** How long the worker may take to start QuickJS before the call fails (the deadline starts after). */
const STARTUP_LIMIT_MS = 30_000;
/** How long an abandoned tool call may take to record its abandonment before the outer call returns. */
const ABANDON_GRACE_MS = 1_000;

type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'log'; readonly text: string }
  | { readonly type: 'cut' }
  | { readonly type: 'call'; readonly id: number; readonly name: string; readonly args: string }
  | { readonly type: 'done'; readonly ok: true; readonly value?: string; readonly reusable: boolean }
  | { readonly type: 'done'; readonly ok: false; readonly message: string; readonly reusable: boolean };

interface QueuedCall {
  readonly id: number;
  readonly name: string;
  readonly args: string;
}

const messageOf = errorText;

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Runs `code` (the body of an async function) in a fresh QuickJS runtime in its own worker thread.
 * The deadline is a host timer started when the code starts: it covers the code and the tools it
 * waits for, and ends the worker however busy it is. Tool calls run one at a time in the order the
 * code makes them; none is started after the code has ended. Never rejects for the code's faults:
 * they come back as `error`.
 */
export const runInSandbox = async (request: SandboxRequest): Promise<SandboxOutcome> => {
  const runtime = await loadCodeSandbox();
  return new SandboxRun(runtime, request).result;
};

class SandboxRun {
  readonly result: Promise<SandboxOutcome>;
  readonly #request: SandboxRequest;
  readonly #worker: Worker;
  readonly #stop = new AbortController();
  readonly #lines: string[] = [];
  readonly #queue: QueuedCall[] = [];
  #running: { readonly name: string; readonly done: Promise<void> } | undefined;
  #finished = false;
  #cut = false;
  #deadlineAt = Number.POSITIVE_INFINITY;
  #timer: NodeJS.Timeout;
  #resolve!: (outcome: SandboxOutcome) => void;

  constructor(sandbox: CodeSandboxRuntime, request: SandboxRequest) {
    this.#request = request;
    this.result = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    this.#worker = acquireWorker(sandbox, request.memoryLimitBytes);
    this.#timer = setTimeout(() => this.#end({ error: `the sandbox did not start within ${STARTUP_LIMIT_MS} ms` }), STARTUP_LIMIT_MS);
    this.#worker.on('message', this.#onMessage);
    this.#worker.on('error', this.#onError);
    this.#worker.on('exit', this.#onExit);
    this.#worker.postMessage({
      type: 'start',
      job: {
        memoryPages: Math.ceil(request.memoryLimitBytes / 65_536),
        memoryLimitBytes: request.memoryLimitBytes,
        outputLimit: CODE_OUTPUT_LIMIT_CHARS,
        toolNames: [...request.toolNames],
        prelude: GUEST_PRELUDE,
        code: request.code,
      },
    });
    if (request.signal?.aborted) this.#onAbort();
    else request.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  readonly #onAbort = (): void => {
    this.#end({ error: `code aborted: ${messageOf(this.#request.signal?.reason)}` });
  };

  readonly #onError = (error: Error): void => {
    const code = (error as { code?: unknown }).code;
    this.#end({
      error:
        code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `code ran out of memory (limit ${this.#request.memoryLimitBytes} bytes)`
          : `the sandbox failed: ${messageOf(error)}`,
    });
  };

  readonly #onExit = (exitCode: number): void => {
    this.#end({ error: `the sandbox stopped unexpectedly (exit code ${exitCode})` });
  };

  readonly #onMessage = (message: FromWorker): void => {
    if (this.#finished) return;
    switch (message.type) {
      case 'ready': {
        clearTimeout(this.#timer);
        const { timeoutMs } = this.#request;
        this.#deadlineAt = performance.now() + timeoutMs;
        this.#timer = setTimeout(() => {
          const running = this.#running ? ` (tools.${this.#running.name} was running; its call is abandoned)` : '';
          this.#end({ error: `code timed out after ${timeoutMs} ms`, note: running });
        }, timeoutMs);
        return;
      }
      case 'log':
        this.#lines.push(message.text);
        return;
      case 'cut':
        this.#cut = true;
        return;
      case 'call':
        this.#queue.push({ id: message.id, name: message.name, args: message.args });
        this.#pump();
        return;
      case 'done':
        if (message.ok) this.#end(message.value === undefined ? {} : { value: message.value }, message.reusable);
        else this.#end({ error: message.message }, message.reusable);
        return;
    }
  };

  /** Starts the next queued tool call when none is running. */
  #pump(): void {
    if (this.#running || this.#finished) return;
    const call = this.#queue.shift();
    if (!call) return;
    const done = (async () => {
      let reply: { ok: boolean; text: string };
      try {
        const args: unknown = JSON.parse(call.args);
        reply = { ok: true, text: await this.#request.callTool(call.name, args, { signal: this.#stop.signal }) };
      } catch (error) {
        reply = { ok: false, text: messageOf(error) };
      }
      this.#running = undefined;
      if (this.#finished) return;
      this.#worker.postMessage({ type: 'result', id: call.id, ...reply });
      this.#pump();
    })();
    this.#running = { name: call.name, done };
  }

  /** Ends the run once: stops the worker, starts no queued call, and settles the running one first. */
  #end(end: { readonly value?: string; readonly error?: string; readonly note?: string }, reusable = false): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#queue.length = 0;
    this.#request.signal?.removeEventListener('abort', this.#onAbort);
    this.#worker.off('message', this.#onMessage);
    this.#worker.off('error', this.#onError);
    this.#worker.off('exit', this.#onExit);
    // Only a worker whose code reported its own end is idle; any other end (deadline, abort, crash) may
    // have stopped it mid-run, so it is ended.
    if (reusable) releaseWorker(this.#worker, this.#request.memoryLimitBytes);
    else void this.#worker.terminate();
    void this.#settleRunning(end.error).then(() => {
      clearTimeout(this.#timer);
      const lines = [...this.#lines];
      if (this.#cut) lines.push(`[console output cut at ${CODE_OUTPUT_LIMIT_CHARS} characters]`);
      if (end.value !== undefined) lines.push(`=> ${end.value}`);
      this.#resolve({ output: lines.join('\n'), ...(end.error !== undefined ? { error: end.error + (end.note ?? '') } : {}) });
    });
  }

  /**
   * A tool call still running when the code ends: after a failure it is abandoned at once (its caller
   * records that); after a normal return it may finish until the deadline, then it is abandoned.
   */
  async #settleRunning(error: string | undefined): Promise<void> {
    const running = this.#running;
    if (!running) return;
    let reason = error;
    if (reason === undefined) {
      const { signal, timeoutMs } = this.#request;
      reason = await new Promise<string | undefined>((resolve) => {
        const onAbort = (): void => resolve(`code aborted: ${messageOf(signal?.reason)}`);
        clearTimeout(this.#timer);
        this.#timer = setTimeout(() => resolve(`code timed out after ${timeoutMs} ms while tools.${running.name} was running`), this.#remaining());
        if (signal?.aborted) onAbort();
        else signal?.addEventListener('abort', onAbort, { once: true });
        void running.done.then(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve(undefined);
        });
      });
      if (reason === undefined) return;
    }
    this.#stop.abort(new CodeExecutionError(reason));
    await Promise.race([running.done, delay(ABANDON_GRACE_MS)]);
  }

  #remaining(): number {
    return Math.max(0, this.#deadlineAt - performance.now());
  }
}
