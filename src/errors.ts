// ContextLedgerError: the base of every error the library throws, with a stable `code` and guards that work across copies.
//
// This file imports nothing, so every layer can import it.

const MARKER = Symbol.for('context-ledger.error');

/** A `{ path, message }` pair naming one thing wrong with an input (the same shape as an event issue). */
export interface ErrorIssue {
  /** Dotted path of the offending value, `''` for the input itself. */
  readonly path: string;
  readonly message: string;
}

const showName = (name: unknown): string => {
  try {
    return JSON.stringify(name) ?? String(name);
  } catch {
    return typeof name;
  }
};

/**
 * The base of every error context-ledger throws. `code` is stable across versions (docs/errors.md
 * lists them all). Branch with `isContextLedgerError` or a named guard (`isLogInUseError`, ...), not
 * with `instanceof`: the guards look for a `Symbol.for('context-ledger.error')` marker and the code,
 * so they also recognise errors thrown by a second installed copy of the package.
 * @example
 * try { await openLevelLog(dir) } catch (e) { if (isContextLedgerError(e) && e.code === 'LOG_IN_USE') console.error(e.message) }
 */
export class ContextLedgerError extends Error {
  /** Stable, documented code: `LOG_IN_USE`, `INVALID_EVENT`, ... */
  readonly code: string;
  constructor(code: string, message: string, options?: { readonly cause?: unknown }) {
    super(message, options !== undefined && 'cause' in options ? { cause: options.cause } : undefined);
    this.code = code;
    this.name = 'ContextLedgerError';
    Object.defineProperty(this, MARKER, { value: true, enumerable: false });
  }

  /** Same as {@link isContextLedgerError}. */
  static isInstance(e: unknown): e is ContextLedgerError {
    return isContextLedgerError(e);
  }
}

/**
 * Whether `e` was thrown by context-ledger (any installed copy of it).
 * @example if (isContextLedgerError(e)) console.error(e.code)
 */
export const isContextLedgerError = (e: unknown): e is ContextLedgerError =>
  typeof e === 'object' &&
  e !== null &&
  (e as Record<symbol, unknown>)[MARKER] === true &&
  typeof (e as { code?: unknown }).code === 'string';

/**
 * A guard for the errors with one code; what the named `is…Error` guards are made of.
 * @example const isMyError = errorGuard<MyError>('MY_CODE');
 */
export const errorGuard =
  <T extends ContextLedgerError>(code: T['code']) =>
  (e: unknown): e is T =>
    isContextLedgerError(e) && e.code === code;

/**
 * An options object (or a required argument) is missing or out of range; `issues` name each field.
 * @example new InvalidOptionsError('LlmCompactPolicy', [{ path: 'maxItems', message: 'must be a non-negative integer, got -1' }])
 */
export class InvalidOptionsError extends ContextLedgerError {
  declare readonly code: 'INVALID_OPTIONS';
  readonly _tag = 'InvalidOptionsError' as const;
  /** What the options are for: `'Agents'`, `'LlmCompactPolicy'`, `'read'`, ... */
  readonly optionsOf: string;
  readonly issues: readonly ErrorIssue[];
  constructor(optionsOf: string, issues: readonly ErrorIssue[], options?: { readonly cause?: unknown }) {
    super('INVALID_OPTIONS', `invalid options for ${optionsOf}: ${issues.map((i) => (i.path === '' ? i.message : `${i.path}: ${i.message}`)).join('; ')}`, options);
    this.name = 'InvalidOptionsError';
    this.optionsOf = optionsOf;
    this.issues = issues;
  }
}
/** Whether `e` is an {@link InvalidOptionsError} (code `INVALID_OPTIONS`). */
export const isInvalidOptionsError = errorGuard<InvalidOptionsError>('INVALID_OPTIONS');

/**
 * A component named by a description or an option is not known: a tokenizer, an encoding, a context
 * projector, a compact policy. Register it (a replay's `registry`), or pass it as an option.
 * @example new UnknownComponentError('tokenizer', 'my-tokenizer', ' (pass it in registry.tokenizers)')
 */
export class UnknownComponentError extends ContextLedgerError {
  declare readonly code: 'UNKNOWN_COMPONENT';
  readonly _tag = 'UnknownComponentError' as const;
  constructor(
    /** `'projector'`, `'tokenizer'`, `'policy'`, `'OpenAI encoding'`, ... */
    readonly kind: string,
    /** The name as recorded (not always a string in a damaged description). */
    readonly componentName: unknown,
    /** Appended to the message as it is, e.g. `' (pass it in registry.tokenizers)'`. */
    hint = '',
  ) {
    super('UNKNOWN_COMPONENT', `unknown ${kind}: ${showName(componentName)}${hint}`);
    this.name = 'UnknownComponentError';
  }
}
/** Whether `e` is an {@link UnknownComponentError} (code `UNKNOWN_COMPONENT`). */
export const isUnknownComponentError = errorGuard<UnknownComponentError>('UNKNOWN_COMPONENT');

/**
 * An optional peer dependency a feature needs is not installed (or is a version we cannot use).
 * @example new MissingDependencyError('gpt-tokenizer', "openAiTokenizer('o200k_base') needs gpt-tokenizer (^4): npm install gpt-tokenizer")
 */
export class MissingDependencyError extends ContextLedgerError {
  declare readonly code: 'MISSING_DEPENDENCY';
  readonly _tag = 'MissingDependencyError' as const;
  constructor(
    readonly dependency: string,
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super('MISSING_DEPENDENCY', message, options);
    this.name = 'MissingDependencyError';
  }
}
/** Whether `e` is a {@link MissingDependencyError} (code `MISSING_DEPENDENCY`). */
export const isMissingDependencyError = errorGuard<MissingDependencyError>('MISSING_DEPENDENCY');

/**
 * A tokenizer that counts only texts it was given beforehand (prefetched or recorded) was asked to count another.
 * @example new UncountedTextError('anthropic:claude-sonnet-4', "a text of 12 characters was not counted; prefetch the items' texts before projecting")
 */
export class UncountedTextError extends ContextLedgerError {
  declare readonly code: 'TEXT_NOT_COUNTED';
  readonly _tag = 'UncountedTextError' as const;
  constructor(
    readonly tokenizerName: string,
    detail: string,
  ) {
    super('TEXT_NOT_COUNTED', `tokenizer ${tokenizerName}: ${detail}`);
    this.name = 'UncountedTextError';
  }
}
/** Whether `e` is an {@link UncountedTextError} (code `TEXT_NOT_COUNTED`). */
export const isUncountedTextError = errorGuard<UncountedTextError>('TEXT_NOT_COUNTED');

/**
 * A bridge was given something its framework does not accept: a message or item that is not an object, a tool result
 * without its call id, ... `path` names the bad element (`[3].content[1].toolCallId`), `index` the top-level element.
 * Nothing was converted or recorded.
 * @example new BridgeInputError('ai-sdk', 'fromModelMessages', 1, '[1].content[0].toolCallId', 'must be a string, got undefined')
 */
export class BridgeInputError extends ContextLedgerError {
  declare readonly code: 'BRIDGE_INPUT';
  readonly _tag = 'BridgeInputError' as const;
  constructor(
    /** `'ai-sdk'`, `'openai-agents'` or `'langchain'`. */
    readonly bridge: string,
    /** The function or callback that was given the input: `'fromModelMessages'`, `'prepareStep'`, `'LedgerSession.addItems'`, ... */
    readonly operation: string,
    /** The index of the bad top-level element (a message, an item); undefined when the input itself is bad. */
    readonly index: number | undefined,
    /** Where in the input: `[1].content[0].toolCallId`; `''` for the input itself. */
    readonly path: string,
    readonly problem: string,
  ) {
    super('BRIDGE_INPUT', `${operation} (${bridge} bridge): ${path === '' ? 'the input' : path} ${problem}`);
    this.name = 'BridgeInputError';
  }
}
/** Whether `e` is a {@link BridgeInputError} (code `BRIDGE_INPUT`). */
export const isBridgeInputError = errorGuard<BridgeInputError>('BRIDGE_INPUT');

/**
 * A session history capability (the Agents SDK's `applyHistoryTransaction` / `applyHistoryMutations` on `LedgerSession`)
 * refused its arguments: `invalid` (not a transaction it can record: bad fields, data JSON cannot hold), `operation-conflict`
 * (the operation id was already applied with another transaction), `suffix-mismatch` (memory does not end with the expected
 * suffix). Nothing was recorded, and the operation id stays free. The message carries the SDK's own wording, never the items.
 * @example new SessionHistoryError('chat-1', 'suffix-mismatch', 'op-7', 'Session history suffix no longer matches the transaction precondition.')
 */
export class SessionHistoryError extends ContextLedgerError {
  declare readonly code: 'SESSION_HISTORY';
  readonly _tag = 'SessionHistoryError' as const;
  constructor(
    readonly sessionId: string,
    readonly problem: 'invalid' | 'operation-conflict' | 'suffix-mismatch',
    readonly operationId: string | undefined,
    detail: string,
    options?: { readonly cause?: unknown },
  ) {
    super('SESSION_HISTORY', `session ${JSON.stringify(sessionId)}: ${detail}`, options);
    this.name = 'SessionHistoryError';
  }
}
/** Whether `e` is a {@link SessionHistoryError} (code `SESSION_HISTORY`). */
export const isSessionHistoryError = errorGuard<SessionHistoryError>('SESSION_HISTORY');

/**
 * A broken invariant inside context-ledger (a bug: please report it with the message).
 * @example throw new InternalError(`unhandled event ${JSON.stringify(event)}`)
 */
export class InternalError extends ContextLedgerError {
  declare readonly code: 'INTERNAL';
  readonly _tag = 'InternalError' as const;
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('INTERNAL', message, options);
    this.name = 'InternalError';
  }
}
/** Whether `e` is an {@link InternalError} (code `INTERNAL`). */
export const isInternalError = errorGuard<InternalError>('INTERNAL');
