// A bounded pool of sandbox workers: at most `maxWorkers` alive at once, calls beyond the bound wait in order.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import { InvalidCodeActOptionError } from './errors.js';
import type { CodeSandboxRuntime } from './load.js';
import { WORKER_SOURCE } from './worker-source.js';

/** Idle workers kept per memory limit. */
const MAX_IDLE_PER_LIMIT = 2;
/** An idle worker is ended after this long. */
const IDLE_MS = 10_000;

/** Options of `createCodeSandboxPool`. */
export interface CodeSandboxPoolOptions {
  /**
   * The most sandbox workers alive at once, whether running code, starting, idle or being ended (a positive
   * integer; default `os.availableParallelism()`). Calls beyond it wait in order, their deadline running.
   */
  readonly maxWorkers?: number;
}

/** What a pool holds now and has done so far (for tests, diagnostics and benches). */
export interface CodeSandboxPoolStats {
  readonly maxWorkers: number;
  /** Workers alive now: running code, starting, idle, or ended but not yet exited. */
  readonly live: number;
  /** Workers handed to a call now. */
  readonly busy: number;
  /** Workers waiting for the next call. */
  readonly idle: number;
  /** Calls waiting for a worker now. */
  readonly queued: number;
  /** The most workers alive at once so far (never above `maxWorkers`). */
  readonly peakLive: number;
  /** The most calls waiting at once so far. */
  readonly peakQueued: number;
  /** Workers started so far. */
  readonly spawned: number;
  /** Calls that were given an idle worker. */
  readonly reused: number;
  /** Workers given back after a call that ended by itself. */
  readonly released: number;
  /** Calls that left the queue without a worker (deadline, abort, closed pool). */
  readonly leftQueue: number;
}

/**
 * The workers CodeAct code runs in. One pool is shared by every agent and `runJavascript` call that is not
 * given one; an agent with `codeMaxWorkers` has its own, which `agent.close()` ends.
 * @example const pool = createCodeSandboxPool({ maxWorkers: 4 }); Agents.codeAct({ ...options, codeSandboxPool: pool }); await pool.close();
 */
export interface CodeSandboxPool {
  readonly maxWorkers: number;
  /** Whether `close()` was called: code given to the pool then fails with `CodeSandboxClosedError`. */
  readonly closed: boolean;
  stats(): CodeSandboxPoolStats;
  /**
   * Ends the pool: queued calls and calls running code end at once (`code aborted: the sandbox pool was
   * closed`), idle workers are ended; resolves when every worker has exited. Calling it again does nothing more.
   */
  close(): Promise<void>;
}

/** A call waiting for a worker, or holding one. */
export interface WorkerLease {
  readonly sandbox: CodeSandboxRuntime;
  readonly memoryLimitBytes: number;
  /** Called once, synchronously, when the call gets its worker. */
  onWorker(worker: Worker): void;
  /** Called when the pool closes while the call waits or holds a worker: the call ends at once. */
  onClosed(): void;
}

interface Idle {
  readonly worker: Worker;
  readonly timer: NodeJS.Timeout;
}

const maxWorkersSchema = z.number().int().positive();

/** Checks a worker bound; a bad one throws `InvalidCodeActOptionError` naming `option`. */
export const parseMaxWorkers = (value: unknown, option: string): number => {
  const parsed = maxWorkersSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const shown = typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? typeof value);
  throw new InvalidCodeActOptionError(option, `expected a positive integer (got ${shown})`);
};

/** What a worker was started for: a replacement is started the same way. */
interface WorkerSetup {
  readonly sandbox: CodeSandboxRuntime;
  readonly memoryLimitBytes: number;
}

class SandboxWorkerPool implements CodeSandboxPool {
  readonly maxWorkers: number;
  /**
   * Whether a call's deadline counts from the moment its code starts rather than from the call: a re-run's pool,
   * so that how busy the replaying host is cannot turn a recorded run into one that never started.
   */
  readonly deadlineFromStart: boolean;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Every worker started and not yet exited, with the promise of its exit. */
  readonly #alive = new Map<Worker, Promise<void>>();
  readonly #busy = new Map<Worker, WorkerLease>();
  readonly #idle = new Map<number, Idle[]>();
  readonly #ending = new Set<Worker>();
  readonly #setup = new Map<Worker, WorkerSetup>();
  /** Workers ended mid-call (deadline, abort, crash): each is replaced by an idle one when it has exited. */
  readonly #replace = new Set<Worker>();
  readonly #queue: WorkerLease[] = [];
  #dispatching = false;
  #again = false;
  readonly #counts = { peakLive: 0, peakQueued: 0, spawned: 0, reused: 0, released: 0, leftQueue: 0 };

  constructor(maxWorkers: number, options: { readonly deadlineFromStart?: boolean } = {}) {
    this.maxWorkers = maxWorkers;
    this.deadlineFromStart = options.deadlineFromStart ?? false;
  }

  get closed(): boolean {
    return this.#closed;
  }

  stats(): CodeSandboxPoolStats {
    let idle = 0;
    for (const list of this.#idle.values()) idle += list.length;
    return { maxWorkers: this.maxWorkers, live: this.#alive.size, busy: this.#busy.size, idle, queued: this.#queue.length, ...this.#counts };
  }

  /** Queues a call for a worker; `cancel()` takes it out of the queue if it is still there (true then). */
  acquire(lease: WorkerLease): { cancel(): boolean } {
    if (this.#closed) {
      lease.onClosed();
      return { cancel: () => false };
    }
    this.#queue.push(lease);
    this.#counts.peakQueued = Math.max(this.#counts.peakQueued, this.#queue.length);
    this.#dispatch();
    return {
      cancel: () => {
        const index = this.#queue.indexOf(lease);
        if (index < 0) return false;
        this.#queue.splice(index, 1);
        this.#counts.leftQueue += 1;
        return true;
      },
    };
  }

  /** Gives back a worker whose call ended by itself (its QuickJS instance is gone): the next call's, or idle. */
  release(worker: Worker, memoryLimitBytes: number): void {
    this.#busy.delete(worker);
    this.#counts.released += 1;
    if (this.#closed || !this.#alive.has(worker) || this.#ending.has(worker)) return this.#end(worker);
    const waiting = this.#queue.some((lease) => lease.memoryLimitBytes === memoryLimitBytes);
    if (!waiting && (this.#idle.get(memoryLimitBytes)?.length ?? 0) >= MAX_IDLE_PER_LIMIT) return this.#end(worker);
    this.#keepIdle(worker, memoryLimitBytes);
    this.#dispatch();
  }

  /**
   * Ends a worker a call may have left mid-run (deadline, abort, crash). Its place frees when it has exited; then a
   * queued call gets a new worker, or, with none waiting, a new idle one takes its place (the next call's start).
   */
  discard(worker: Worker): void {
    this.#busy.delete(worker);
    if (this.#alive.has(worker)) this.#replace.add(worker);
    this.#end(worker);
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    const queued = this.#queue.splice(0);
    this.#counts.leftQueue += queued.length;
    for (const lease of queued) lease.onClosed();
    for (const lease of [...this.#busy.values()]) lease.onClosed();
    for (const worker of [...this.#alive.keys()]) this.#end(worker);
    await Promise.all(this.#alive.values());
  }

  /** Busy workers (tests end one to see that it is replaced). */
  busyWorkers(): Worker[] {
    return [...this.#busy.keys()];
  }

  #spawn(setup: WorkerSetup): Worker {
    const memoryMb = Math.ceil(setup.memoryLimitBytes / (1024 * 1024));
    const { sandbox } = setup;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { corePath: sandbox.corePath, variantPath: sandbox.variantPath, wasmModule: sandbox.wasmModule },
      // The worker's own JS heap holds what crosses the boundary (strings of at most the sandbox's memory).
      resourceLimits: { maxOldGenerationSizeMb: 3 * memoryMb + 32 },
      // Nothing of the host's flags (loaders, --require preloads, inspector) or environment reaches the worker.
      execArgv: [],
      env: {},
    });
    const exited = new Promise<void>((resolve) => {
      worker.once('exit', () => {
        // Ended mid-call, or crashed while busy: an idle worker takes its place.
        const replaced = this.#replace.has(worker) || this.#busy.has(worker) ? this.#setup.get(worker) : undefined;
        this.#forget(worker);
        resolve();
        this.#dispatch();
        if (replaced) this.#spawnIdle(replaced);
      });
    });
    // A worker's failure is its call's to report (the call listens too); it ends the worker, which exits.
    worker.on('error', () => {
      if (this.#busy.has(worker)) this.#replace.add(worker);
      this.#end(worker);
    });
    this.#alive.set(worker, exited);
    this.#setup.set(worker, { sandbox, memoryLimitBytes: setup.memoryLimitBytes });
    this.#counts.spawned += 1;
    this.#counts.peakLive = Math.max(this.#counts.peakLive, this.#alive.size);
    return worker;
  }

  /** A replacement for an ended worker, kept idle, when no call waits, there is room, and its limit has idle room. */
  #spawnIdle(setup: WorkerSetup): void {
    if (this.#closed || this.#queue.length > 0 || this.#alive.size >= this.maxWorkers) return;
    if ((this.#idle.get(setup.memoryLimitBytes)?.length ?? 0) >= MAX_IDLE_PER_LIMIT) return;
    this.#keepIdle(this.#spawn(setup), setup.memoryLimitBytes);
  }

  #keepIdle(worker: Worker, memoryLimitBytes: number): void {
    const list = this.#idle.get(memoryLimitBytes) ?? [];
    const timer = setTimeout(() => this.#end(worker), IDLE_MS).unref();
    worker.unref();
    list.push({ worker, timer });
    this.#idle.set(memoryLimitBytes, list);
  }

  #forget(worker: Worker): void {
    this.#alive.delete(worker);
    this.#setup.delete(worker);
    this.#replace.delete(worker);
    this.#busy.delete(worker);
    this.#ending.delete(worker);
    this.#removeIdle(worker);
  }

  #removeIdle(worker: Worker): boolean {
    for (const list of this.#idle.values()) {
      const index = list.findIndex((e) => e.worker === worker);
      if (index >= 0) {
        clearTimeout(list[index]!.timer);
        list.splice(index, 1);
        return true;
      }
    }
    return false;
  }

  #end(worker: Worker): void {
    this.#removeIdle(worker);
    if (!this.#alive.has(worker) || this.#ending.has(worker)) return;
    this.#ending.add(worker);
    worker.terminate().catch(() => undefined);
  }

  #handOut(worker: Worker, lease: WorkerLease): void {
    this.#busy.set(worker, lease);
    worker.ref();
    lease.onWorker(worker);
  }

  /** Gives queued calls their workers: an idle one of their memory limit, else a new one while there is room. */
  #dispatch(): void {
    if (this.#dispatching) {
      this.#again = true;
      return;
    }
    this.#dispatching = true;
    try {
      do {
        this.#again = false;
        if (this.#closed) return;
        for (let i = 0; i < this.#queue.length; ) {
          const lease = this.#queue[i]!;
          const entry = this.#idle.get(lease.memoryLimitBytes)?.pop();
          if (!entry) {
            i += 1;
            continue;
          }
          clearTimeout(entry.timer);
          this.#queue.splice(i, 1);
          this.#counts.reused += 1;
          this.#handOut(entry.worker, lease);
        }
        while (this.#queue.length > 0 && this.#alive.size < this.maxWorkers) {
          const lease = this.#queue.shift()!;
          this.#handOut(this.#spawn(lease), lease);
        }
        // Idle workers of other memory limits make room for the calls still waiting.
        let room = this.#queue.length - this.#ending.size;
        for (const list of this.#idle.values()) {
          while (room > 0 && list.length > 0) {
            this.#end(list[0]!.worker);
            room -= 1;
          }
        }
      } while (this.#again);
    } finally {
      this.#dispatching = false;
    }
  }
}

/**
 * A pool of at most `maxWorkers` sandbox workers (default `os.availableParallelism()`); a bad bound throws
 * `InvalidCodeActOptionError` (`maxWorkers: expected a positive integer (got 0)`). Give it to agents
 * (`codeSandboxPool`) or `runJavascript` (`pool`) to share one bound; end it with `close()`.
 * @example const pool = createCodeSandboxPool({ maxWorkers: 2 }); await runJavascript('return 1', [], callTool, 1_000, { pool }); await pool.close();
 */
export const createCodeSandboxPool = (options: CodeSandboxPoolOptions = {}): CodeSandboxPool => {
  if (typeof options !== 'object' || options === null) throw new InvalidCodeActOptionError('options', 'expected an object { maxWorkers? }');
  const unknown = Object.keys(options).filter((key) => key !== 'maxWorkers');
  if (unknown.length > 0) throw new InvalidCodeActOptionError(unknown[0]!, 'unknown option of createCodeSandboxPool (it takes maxWorkers)');
  return new SandboxWorkerPool(options.maxWorkers === undefined ? availableParallelism() : parseMaxWorkers(options.maxWorkers, 'maxWorkers'));
};

let shared: SandboxWorkerPool | undefined;

/** The pool every call without its own uses: `os.availableParallelism()` workers, made on first use, never closed. */
export const defaultCodeSandboxPool = (): CodeSandboxPool => (shared ??= new SandboxWorkerPool(availableParallelism()));

/** A pool for a re-run: each call's deadline counts from the moment its code starts (see `deadlineFromStart`). */
export const createReplayCodeSandboxPool = (): CodeSandboxPool => new SandboxWorkerPool(availableParallelism(), { deadlineFromStart: true });

/** The pool behind a `CodeSandboxPool`; one not made by `createCodeSandboxPool` throws `InvalidCodeActOptionError` naming `option`. */
export const workerPoolOf = (pool: unknown, option: string): SandboxWorkerPool => {
  if (pool instanceof SandboxWorkerPool) return pool;
  throw new InvalidCodeActOptionError(option, 'expected a pool made by createCodeSandboxPool');
};
