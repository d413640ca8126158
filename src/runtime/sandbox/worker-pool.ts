// Idle sandbox workers kept for the next call: a worker start is most of a call's cost, a QuickJS instance is not.
import { Worker } from 'node:worker_threads';
import type { CodeSandboxRuntime } from './load.js';
import { WORKER_SOURCE } from './worker-source.js';

/** Idle workers kept per memory limit. */
const MAX_IDLE_PER_LIMIT = 2;
/** An idle worker is ended after this long. */
const IDLE_MS = 10_000;

interface Idle {
  readonly worker: Worker;
  readonly timer: NodeJS.Timeout;
  readonly onGone: () => void;
}

const idle = new Map<number, Idle[]>();
const stats = { spawned: 0, reused: 0, released: 0 };

/** Workers started, calls that reused one, and workers given back after a call (for tests and diagnostics). */
export const sandboxWorkerStats = (): { readonly spawned: number; readonly reused: number; readonly released: number } => ({ ...stats });

const spawn = (sandbox: CodeSandboxRuntime, memoryLimitBytes: number): Worker => {
  const memoryMb = Math.ceil(memoryLimitBytes / (1024 * 1024));
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { corePath: sandbox.corePath, variantPath: sandbox.variantPath, wasmModule: sandbox.wasmModule },
    // The worker's own JS heap holds what crosses the boundary (strings of at most the sandbox's memory).
    resourceLimits: { maxOldGenerationSizeMb: 3 * memoryMb + 32 },
    // Nothing of the host's flags (loaders, --require preloads, inspector) or environment reaches the worker.
    execArgv: [],
    env: {},
  });
  stats.spawned += 1;
  return worker;
};

/** A worker for one call: an idle one when there is one, else a new one. */
export const acquireWorker = (sandbox: CodeSandboxRuntime, memoryLimitBytes: number): Worker => {
  const entry = idle.get(memoryLimitBytes)?.pop();
  if (!entry) return spawn(sandbox, memoryLimitBytes);
  clearTimeout(entry.timer);
  entry.worker.off('exit', entry.onGone);
  entry.worker.off('error', entry.onGone);
  entry.worker.ref();
  stats.reused += 1;
  return entry.worker;
};

/** Gives back a worker whose call ended normally (its QuickJS instance is gone); it will not keep the process alive. */
export const releaseWorker = (worker: Worker, memoryLimitBytes: number): void => {
  stats.released += 1;
  const list = idle.get(memoryLimitBytes) ?? [];
  if (list.length >= MAX_IDLE_PER_LIMIT) {
    void worker.terminate();
    return;
  }
  const remove = (): void => {
    const index = list.findIndex((e) => e.worker === worker);
    if (index >= 0) list.splice(index, 1);
  };
  const onGone = (): void => remove();
  const timer = setTimeout(() => {
    remove();
    void worker.terminate();
  }, IDLE_MS).unref();
  worker.on('exit', onGone);
  worker.on('error', onGone);
  worker.unref();
  list.push({ worker, timer, onGone });
  idle.set(memoryLimitBytes, list);
};
