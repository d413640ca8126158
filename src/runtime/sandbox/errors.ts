// Named errors of the CodeAct sandbox: the optional QuickJS peers are missing, or a limit option is unusable.
import { ContextLedgerError, errorGuard } from '../../errors.js';

/** The optional peers CodeAct runs code with. */
export const CODE_SANDBOX_PEERS = ['quickjs-emscripten-core', '@jitl/quickjs-wasmfile-release-asyncify'] as const;

/**
 * CodeAct needs `quickjs-emscripten-core` and `@jitl/quickjs-wasmfile-release-asyncify` (0.32), optional
 * peer dependencies, and one of them could not be loaded.
 * @example if (isCodeSandboxUnavailableError(e)) console.error('npm install quickjs-emscripten-core @jitl/quickjs-wasmfile-release-asyncify')
 */
export class CodeSandboxUnavailableError extends ContextLedgerError {
  declare readonly code: 'CODE_SANDBOX_UNAVAILABLE';
  readonly _tag = 'CodeSandboxUnavailableError' as const;
  constructor(
    readonly missing: string,
    options?: { cause?: unknown },
  ) {
    super(
      'CODE_SANDBOX_UNAVAILABLE',
      `CodeAct runs code in QuickJS (WebAssembly) and needs the optional peer dependencies ${CODE_SANDBOX_PEERS.join(' and ')} ` +
        `(^0.32); ${JSON.stringify(missing)} could not be loaded. Install them: npm install ${CODE_SANDBOX_PEERS.map((p) => `${p}@^0.32`).join(' ')}`,
      options,
    );
    this.name = 'CodeSandboxUnavailableError';
  }
}

export const isCodeSandboxUnavailableError = errorGuard<CodeSandboxUnavailableError>('CODE_SANDBOX_UNAVAILABLE');

/**
 * A CodeAct limit (`codeTimeoutMs`, `codeMemoryLimitBytes`) that is not a usable number.
 * @example Agents.codeAct({ ...options, codeTimeoutMs: NaN }) // throws InvalidCodeActOptionError: codeTimeoutMs: …
 */
export class InvalidCodeActOptionError extends ContextLedgerError {
  declare readonly code: 'INVALID_CODEACT_OPTION';
  readonly _tag = 'InvalidCodeActOptionError' as const;
  constructor(
    readonly option: string,
    message: string,
  ) {
    super('INVALID_CODEACT_OPTION', `${option}: ${message}`);
    this.name = 'InvalidCodeActOptionError';
  }
}

export const isInvalidCodeActOptionError = errorGuard<InvalidCodeActOptionError>('INVALID_CODEACT_OPTION');

/**
 * CodeAct code was given to a sandbox pool after its `close()` (an agent's own pool after `agent.close()`).
 * @example await pool.close(); await runJavascript('return 1', [], callTool, 1_000, { pool }) // rejects with CodeSandboxClosedError
 */
export class CodeSandboxClosedError extends ContextLedgerError {
  declare readonly code: 'CODE_SANDBOX_CLOSED';
  readonly _tag = 'CodeSandboxClosedError' as const;
  constructor() {
    super('CODE_SANDBOX_CLOSED', 'the sandbox pool was closed: no more code runs in it (make a new pool, or a new agent)');
    this.name = 'CodeSandboxClosedError';
  }
}

export const isCodeSandboxClosedError = errorGuard<CodeSandboxClosedError>('CODE_SANDBOX_CLOSED');
