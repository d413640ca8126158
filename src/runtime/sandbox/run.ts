// Runs one piece of model code in a pooled QuickJS worker: a deadline from the call, one tool call at a time, nothing after the end.
import type { Worker } from 'node:worker_threads';
import { errorText } from '../../base/index.js';
import { CodeExecutionError } from '../errors.js';
import { CodeSandboxClosedError } from './errors.js';
import { GUEST_PRELUDE } from './guest-prelude.js';
import { loadCodeSandbox, type CodeSandboxRuntime } from './load.js';
import { CODE_OUTPUT_LIMIT_CHARS, type ResolvedCodeActLimits } from './options.js';
import { defaultCodeSandboxPool, workerPoolOf, type CodeSandboxPool } from './worker-pool.js';

/** Calls a tool for the code; rejects with the tool's error. `signal` aborts when the code's run ends early. */
export type SandboxToolCaller = (name: string, args: unknown, options: { readonly signal: AbortSignal }) => Promise<string>;

export interface SandboxRequest extends ResolvedCodeActLimits {
  readonly code: string;
  readonly toolNames: readonly string[];
  readonly callTool: SandboxToolCaller;
  /** The run's signal: aborting it ends the code like the deadline does (a queued call leaves the queue). */
  readonly signal?: AbortSignal;
  /** The workers to run in (default: the shared pool of `os.availableParallelism()` workers). */
  readonly pool?: CodeSandboxPool;
  /** When the call was made (`performance.now()`); the deadline counts from it (default: when `runInSandbox` is called). */
  readonly calledAt?: number;
}

export interface SandboxOutcome {
  /** Console lines, then `=> value` when the code returned something. */
  readonly output: string;
  /** The reason the code failed (thrown error, timeout, memory), or undefined when it returned. */
  readonly error?: string;
  /** Whether the code started: false when it ended while waiting for a worker or while its worker started. */
  readonly started: boolean;
}

/** How long the worker may take to start QuickJS before the call fails (the deadline counts it too). */
const STARTUP_LIMIT_MS = 30_000;
/** How long quick tool calls may follow one another before the bridge yields to the event loop. */
const CALL_SLICE_MS = 5;
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

/** Where a run is: waiting for a worker, waiting for its worker to start QuickJS, or running the code. */
type Phase = 'queued' | 'starting' | 'running';

const messageOf = errorText;

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Runs `code` (the body of an async function) in a fresh QuickJS runtime in a worker of `request.pool`.
 * The deadline is a host timer from the call: it covers the wait for a worker, the worker's start, the
 * code and the tools it waits for, and ends the worker however busy it is. A call whose deadline passes
 * while it waits never gets a worker. Tool calls run one at a time in the order the code makes them;
 * none is started after the deadline or after the code has ended. Never rejects for the code's faults:
 * they come back as `error`. Rejects with `CodeSandboxClosedError` when the pool is closed.
 */
export const runInSandbox = async (request: SandboxRequest): Promise<SandboxOutcome> => {
  const calledAt = request.calledAt ?? performance.now();
  const pool = workerPoolOf(request.pool ?? defaultCodeSandboxPool(), 'pool');
  if (pool.closed) throw new CodeSandboxClosedError();
  const runtime = await loadCodeSandbox();
  return new SandboxRun(runtime, pool, request, calledAt).result;
};

class SandboxRun {
  readonly result: Promise<SandboxOutcome>;
  readonly #request: SandboxRequest;
  readonly #pool: ReturnType<typeof workerPoolOf>;
  #deadlineAt: number;
  readonly #stop = new AbortController();
  readonly #lines: string[] = [];
  readonly #queue: QueuedCall[] = [];
  #phase: Phase = 'queued';
  #worker: Worker | undefined;
  #ticket: { cancel(): boolean } | undefined;
  #running: { readonly name: string; readonly done: Promise<void> } | undefined;
  #finished = false;
  #pumpScheduled = false;
  #sliceEndsAt = 0;
  #cut = false;
  #deadlineTimer: NodeJS.Timeout | undefined;
  #startupTimer: NodeJS.Timeout | undefined;
  #resolve!: (outcome: SandboxOutcome) => void;

  constructor(sandbox: CodeSandboxRuntime, pool: ReturnType<typeof workerPoolOf>, request: SandboxRequest, calledAt: number) {
    this.#request = request;
    this.#pool = pool;
    // A re-run's pool counts the deadline from the code's start (set at `ready`).
    this.#deadlineAt = pool.deadlineFromStart ? Number.POSITIVE_INFINITY : calledAt + request.timeoutMs;
    this.result = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    if (request.signal?.aborted) {
      this.#onAbort();
      return;
    }
    request.signal?.addEventListener('abort', this.#onAbort, { once: true });
    const remaining = this.#remaining();
    if (remaining <= 0) {
      this.#onDeadline();
      return;
    }
    if (!pool.deadlineFromStart) this.#deadlineTimer = setTimeout(this.#onDeadline, remaining);
    this.#ticket = pool.acquire({
      sandbox,
      memoryLimitBytes: request.memoryLimitBytes,
      onWorker: (worker) => this.#start(worker),
      onClosed: () => this.#end({ error: 'code aborted: the sandbox pool was closed', note: this.#whereItWas() }),
    });
  }

  /** The call got its worker: send it the code (it starts QuickJS, says `ready`, then runs it). */
  #start(worker: Worker): void {
    if (this.#finished) {
      this.#pool.release(worker, this.#request.memoryLimitBytes);
      return;
    }
    const request = this.#request;
    this.#worker = worker;
    this.#phase = 'starting';
    this.#startupTimer = setTimeout(() => this.#end({ error: `the sandbox did not start within ${STARTUP_LIMIT_MS} ms` }), STARTUP_LIMIT_MS);
    worker.on('message', this.#onMessage);
    worker.on('error', this.#onError);
    worker.on('exit', this.#onExit);
    worker.postMessage({
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
  }

  /** What a run that ends now says about where it was, after its reason. */
  #whereItWas(): string {
    if (this.#phase === 'queued') return ` (it never started: it waited for a sandbox worker; the pool has ${this.#pool.maxWorkers})`;
    if (this.#phase === 'starting') return ' (it never started: its sandbox worker was still starting)';
    return '';
  }

  readonly #onDeadline = (): void => {
    const running = this.#running ? ` (tools.${this.#running.name} was running; its call is abandoned)` : '';
    this.#end({ error: `code timed out after ${this.#request.timeoutMs} ms`, note: this.#phase === 'running' ? running : this.#whereItWas() });
  };

  readonly #onAbort = (): void => {
    this.#end({ error: `code aborted: ${messageOf(this.#request.signal?.reason)}`, note: this.#whereItWas() });
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
      case 'ready':
        clearTimeout(this.#startupTimer);
        this.#phase = 'running';
        if (this.#pool.deadlineFromStart) {
          this.#deadlineAt = performance.now() + this.#request.timeoutMs;
          this.#deadlineTimer = setTimeout(this.#onDeadline, this.#request.timeoutMs);
        }
        return;
      case 'log':
        this.#lines.push(message.text);
        return;
      case 'cut':
        this.#cut = true;
        return;
      case 'call':
        this.#queue.push({ id: message.id, name: message.name, args: message.args });
        // A call made while none runs starts at once; one made while another runs, or while the bridge yields after
        // a call, waits its turn.
        if (!this.#pumpScheduled && !this.#running) {
          this.#sliceEndsAt = performance.now() + CALL_SLICE_MS;
          this.#pump();
        }
        return;
      case 'done':
        if (message.ok) this.#end(message.value === undefined ? {} : { value: message.value }, message.reusable);
        else this.#end({ error: message.message }, message.reusable);
        return;
    }
  };

  /**
   * Starts the next tool call from the event loop's check phase. After a call ends, the next one follows at once
   * for up to `CALL_SLICE_MS`, then the bridge yields: a burst of quick calls (10,000 posted at once arrive in one
   * message drain) no longer runs in one task that holds up other runs' timers and aborts.
   */
  #schedulePump(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    setImmediate(() => {
      this.#pumpScheduled = false;
      this.#sliceEndsAt = performance.now() + CALL_SLICE_MS;
      this.#pump();
    });
  }

  /**
   * Starts the next queued tool call when none is running and the deadline has not passed (a busy event loop
   * runs timers late: the bridge checks the clock itself).
   */
  #pump(): void {
    if (this.#running || this.#finished || this.#queue.length === 0) return;
    if (this.#remaining() <= 0) {
      this.#onDeadline();
      return;
    }
    const call = this.#queue.shift()!;
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
      // Past the deadline the code gets no more results, even when the timer has not fired yet.
      if (this.#remaining() <= 0) {
        this.#onDeadline();
        return;
      }
      this.#worker?.postMessage({ type: 'result', id: call.id, ...reply });
      if (performance.now() < this.#sliceEndsAt) this.#pump();
      else this.#schedulePump();
    })();
    this.#running = { name: call.name, done };
  }

  /** Ends the run once: leaves the queue or stops the worker, starts no queued call, and settles the running one first. */
  #end(end: { readonly value?: string; readonly error?: string; readonly note?: string }, reusable = false): void {
    if (this.#finished) return;
    this.#finished = true;
    const started = this.#phase === 'running';
    this.#queue.length = 0;
    clearTimeout(this.#deadlineTimer);
    clearTimeout(this.#startupTimer);
    this.#request.signal?.removeEventListener('abort', this.#onAbort);
    this.#ticket?.cancel();
    const worker = this.#worker;
    if (worker) {
      worker.off('message', this.#onMessage);
      worker.off('error', this.#onError);
      worker.off('exit', this.#onExit);
      // Only a worker whose code reported its own end is idle; any other end (deadline, abort, crash) may
      // have stopped it mid-run, so it is ended.
      if (reusable) this.#pool.release(worker, this.#request.memoryLimitBytes);
      else this.#pool.discard(worker);
    }
    void this.#settleRunning(end.error).then(() => {
      const lines = [...this.#lines];
      if (this.#cut) lines.push(`[console output cut at ${CODE_OUTPUT_LIMIT_CHARS} characters]`);
      if (end.value !== undefined) lines.push(`=> ${end.value}`);
      this.#resolve({ output: lines.join('\n'), started, ...(end.error !== undefined ? { error: end.error + (end.note ?? '') } : {}) });
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
      let timer: NodeJS.Timeout | undefined;
      reason = await new Promise<string | undefined>((resolve) => {
        const onAbort = (): void => resolve(`code aborted: ${messageOf(signal?.reason)}`);
        timer = setTimeout(() => resolve(`code timed out after ${timeoutMs} ms while tools.${running.name} was running`), this.#remaining());
        if (signal?.aborted) onAbort();
        else signal?.addEventListener('abort', onAbort, { once: true });
        void running.done.then(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve(undefined);
        });
      });
      clearTimeout(timer);
      if (reason === undefined) return;
    }
    this.#stop.abort(new CodeExecutionError(reason));
    await Promise.race([running.done, delay(ABANDON_GRACE_MS)]);
  }

  #remaining(): number {
    return Math.max(0, this.#deadlineAt - performance.now());
  }
}
