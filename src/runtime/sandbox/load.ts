// Loads the optional QuickJS peers lazily, the first time CodeAct needs them, with a named error when absent.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { CodeSandboxUnavailableError } from './errors.js';

/** What a sandbox worker needs: where the two packages live and the compiled QuickJS WebAssembly. */
export interface CodeSandboxRuntime {
  /** CommonJS entry of quickjs-emscripten-core (the worker `require`s it). */
  readonly corePath: string;
  /** CommonJS entry of @jitl/quickjs-wasmfile-release-asyncify. */
  readonly variantPath: string;
  /** The QuickJS build, compiled once per process and shared with every worker. */
  readonly wasmModule: CompiledWasmModule;
}

export type PeerImporter = (specifier: string) => Promise<unknown>;

/** A compiled `WebAssembly.Module`, handed to workers as is (typed here without the DOM library). */
export type CompiledWasmModule = object;

// The compiler's libraries declare WebAssembly's types but not the global itself (no DOM lib).
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<CompiledWasmModule> } }).WebAssembly;

const CORE = 'quickjs-emscripten-core';
const VARIANT = '@jitl/quickjs-wasmfile-release-asyncify';

// A literal `import(specifier)` of a variable keeps bundlers from inlining or requiring the optional peers.
const importPeer: PeerImporter = (specifier) => import(specifier);

const load = async (importer: PeerImporter): Promise<CodeSandboxRuntime> => {
  const require = createRequire(import.meta.url);
  const attempt = async <T>(name: string, step: () => Promise<T> | T): Promise<T> => {
    try {
      return await step();
    } catch (cause) {
      throw new CodeSandboxUnavailableError(name, { cause });
    }
  };
  const core = (await attempt(CORE, () => importer(CORE))) as { newQuickJSAsyncWASMModuleFromVariant?: unknown; newVariant?: unknown };
  if (typeof core.newQuickJSAsyncWASMModuleFromVariant !== 'function' || typeof core.newVariant !== 'function') {
    throw new CodeSandboxUnavailableError(CORE, { cause: `${CORE} does not export newQuickJSAsyncWASMModuleFromVariant and newVariant (a version other than 0.32?)` });
  }
  const variant = (await attempt(VARIANT, () => importer(VARIANT))) as { default?: { type?: unknown } };
  if (variant.default?.type !== 'async') {
    throw new CodeSandboxUnavailableError(VARIANT, { cause: `${VARIANT} is not an asyncify variant of QuickJS` });
  }
  const corePath = await attempt(CORE, () => require.resolve(CORE));
  const variantPath = await attempt(VARIANT, () => require.resolve(VARIANT));
  const wasmModule = await attempt(VARIANT, async () => wasm.compile(await readFile(require.resolve(`${VARIANT}/wasm`))));
  return { corePath, variantPath, wasmModule };
};

let loading: Promise<CodeSandboxRuntime> | undefined;

/**
 * Loads the QuickJS peers once per process (dynamic import, so they stay optional); throws
 * `CodeSandboxUnavailableError` when they are not installed. A failed load is retried on the next call.
 * @example await loadCodeSandbox() // before the first CodeAct run, to fail early
 */
export const loadCodeSandbox = (importer: PeerImporter = importPeer): Promise<CodeSandboxRuntime> => {
  if (importer !== importPeer) return load(importer);
  loading ??= load(importer).catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
};

/**
 * Checks that CodeAct's optional peers are installed and load (the first CodeAct `run` does the same);
 * rejects with `CodeSandboxUnavailableError` naming the missing one.
 * @example await ensureCodeSandbox() // at startup, to fail before the first request
 */
export const ensureCodeSandbox = async (): Promise<void> => {
  await loadCodeSandbox();
};
