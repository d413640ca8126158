// Named errors of the CodeAct sandbox: the optional QuickJS peers are missing, or a limit option is unusable.
import { ContextLedgerError } from '../../base/errors.js';

/** The optional peers CodeAct runs code with. */
export const CODE_SANDBOX_PEERS = ['quickjs-emscripten-core', '@jitl/quickjs-wasmfile-release-asyncify'] as const;

/**
 * CodeAct needs `quickjs-emscripten-core` and `@jitl/quickjs-wasmfile-release-asyncify` (0.32), optional peer
 * dependencies, and one of them could not be loaded.
 * @example if (CodeSandboxUnavailableError.isInstance(e)) console.error('npm install quickjs-emscripten-core @jitl/quickjs-wasmfile-release-asyncify')
 */
export class CodeSandboxUnavailableError extends ContextLedgerError {
  static override readonly code = 'CODE_SANDBOX_UNAVAILABLE';
  constructor(
    readonly missing: string,
    options?: { cause?: unknown },
  ) {
    super(
      `CodeAct runs code in QuickJS (WebAssembly) and needs the optional peer dependencies ${CODE_SANDBOX_PEERS.join(' and ')} ` +
        `(^0.32); ${JSON.stringify(missing)} could not be loaded. Install them: npm install ${CODE_SANDBOX_PEERS.map((p) => `${p}@^0.32`).join(' ')}`,
      options,
    );
  }
}
/** @deprecated use CodeSandboxUnavailableError.isInstance */ export const isCodeSandboxUnavailableError = (e: unknown): e is CodeSandboxUnavailableError => CodeSandboxUnavailableError.isInstance(e);

/**
 * A CodeAct option is unusable: a limit (`codeTimeoutMs`, `codeMemoryLimitBytes`) that is not a usable number, a
 * worker bound (`codeMaxWorkers`, `maxWorkers`) that is not a positive integer, a pool (`codeSandboxPool`, `pool`) not
 * made by `createCodeSandboxPool`, or both `codeMaxWorkers` and `codeSandboxPool`.
 * @example Agents.codeAct({ ...options, codeTimeoutMs: NaN }) // throws InvalidCodeActOptionError: codeTimeoutMs: …
 */
export class InvalidCodeActOptionError extends ContextLedgerError {
  static override readonly code = 'INVALID_CODEACT_OPTION';
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(`${option}: ${message}`);
  }
}
/** @deprecated use InvalidCodeActOptionError.isInstance */ export const isInvalidCodeActOptionError = (e: unknown): e is InvalidCodeActOptionError => InvalidCodeActOptionError.isInstance(e);

/**
 * CodeAct code was given to a sandbox pool after its `close()` (an agent's own pool after `agent.close()`); in a run
 * it is the call's `Error: …` result.
 * @example await pool.close(); await runJavascript('return 1', [], callTool, 1_000, { pool }) // rejects with CodeSandboxClosedError
 */
export class CodeSandboxClosedError extends ContextLedgerError {
  static override readonly code = 'CODE_SANDBOX_CLOSED';
  constructor() {
    super('the sandbox pool was closed: no more code runs in it (make a new pool, or a new agent)');
  }
}
/** @deprecated use CodeSandboxClosedError.isInstance */ export const isCodeSandboxClosedError = (e: unknown): e is CodeSandboxClosedError => CodeSandboxClosedError.isInstance(e);
