// ContextLedgerError: the base of every error the library throws, with a stable `code` and an `isInstance` that works across copies.
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

/** The codes of `value`'s classes, from its own up (a subclass is also an instance of the classes it extends). */
const codesOfClasses = (value: object): string[] => {
  const codes: string[] = [];
  for (let proto: unknown = Object.getPrototypeOf(value); proto !== null && typeof proto === 'object'; proto = Object.getPrototypeOf(proto)) {
    const code = (Object.getOwnPropertyDescriptor(proto, 'constructor')?.value as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
};

/**
 * The base of every error context-ledger throws. Each error class declares its stable code once, as a static
 * (`static override readonly code = 'LOG_IN_USE'`), which every instance carries as `code`, and builds its message in
 * its constructor; `name` is the class's name. Codes never change across versions (docs/errors.md lists them all,
 * generated from the classes). Branch with `XError.isInstance(e)`, not with `instanceof`: it looks for a
 * `Symbol.for('context-ledger.error')` marker and the class's code, so it also recognises errors thrown by a second
 * installed copy of the package. `ContextLedgerError.isInstance(e)` is true for any error of ours.
 * @example
 * try { await openLevelLog(dir) } catch (e) { if (LogInUseError.isInstance(e)) console.error(e.path); else if (ContextLedgerError.isInstance(e)) console.error(e.code) }
 */
export class ContextLedgerError extends Error {
  /** The code of this class's errors (`LOG_IN_USE`, ...); undefined on ContextLedgerError itself, whose instances carry the code they were made with. */
  static readonly code: string | undefined = undefined;
  /** Stable, documented code: `LOG_IN_USE`, `INVALID_EVENT`, ... */
  readonly code: string;
  /** A subclass's constructor passes its message: the code is the class's static `code`. */
  constructor(message: string, options?: { readonly cause?: unknown });
  /** An error with a code of your own: `new ContextLedgerError('MY_CODE', 'what happened')`. */
  constructor(code: string, message: string, options?: { readonly cause?: unknown });
  constructor(first: string, second?: string | { readonly cause?: unknown }, third?: { readonly cause?: unknown }) {
    const [code, message, options] = typeof second === 'string' ? [first, second, third] : [new.target.code, first, second];
    super(message, options !== undefined && 'cause' in options ? { cause: options.cause } : undefined);
    if (code === undefined) {
      throw new InvalidOptionsError(new.target.name, [{ path: 'code', message: 'an error class needs a code: declare `static override readonly code`, or pass `new ContextLedgerError(code, message)`' }]);
    }
    if (new.target.code !== undefined && code !== new.target.code) {
      throw new InvalidOptionsError(new.target.name, [{ path: 'code', message: `its code is ${new.target.code}; pass (message, options), not ${JSON.stringify(code)}` }]);
    }
    this.code = code;
    // The class's own name: `LogInUseError`, ... (a minifier that renames classes renames it too; `code` stays)
    this.name = new.target.name;
    Object.defineProperty(this, MARKER, { value: true, enumerable: false });
  }

  /**
   * Whether `value` is an error of this class or of a class that extends it, also when it was thrown by another
   * installed copy of the package (where `instanceof` says false): it carries the `Symbol.for('context-ledger.error')`
   * marker, and this class's code is its own or one of its parent classes'. On ContextLedgerError: any error of ours.
   * A class that declares no code of its own is told by `instanceof`.
   * @example if (ContextOverflowError.isInstance(e)) console.error(e.requestTokens, e.limitTokens)
   */
  static isInstance<T extends ContextLedgerError>(this: (abstract new (...args: never[]) => T) & { readonly code: string | undefined }, value: unknown): value is T {
    if (typeof this !== 'function') {
      throw new InvalidOptionsError('ContextLedgerError.isInstance', [
        { path: '', message: 'it was called without its class (passed on as a function, as in `.filter(XError.isInstance)`): call `XError.isInstance(e)`, or pass `(e) => XError.isInstance(e)`' },
      ]);
    }
    try {
      if (typeof value !== 'object' || value === null || (value as Record<symbol, unknown>)[MARKER] !== true) return false;
      const code = (value as { code?: unknown }).code;
      if (typeof code !== 'string') return false;
      // A class without a code of its own (a user's subclass) is told by instanceof; ContextLedgerError's own code is
      // undefined: any error of ours. (The class is not named here: a bundler would rename a class that names itself.)
      if (!Object.prototype.hasOwnProperty.call(this, 'code')) return value instanceof this;
      return this.code === undefined || code === this.code || codesOfClasses(value).includes(this.code);
    } catch {
      // a proxy whose traps throw is not one of ours
      return false;
    }
  }
}
/** @deprecated use ContextLedgerError.isInstance */ export const isContextLedgerError = (e: unknown): e is ContextLedgerError => ContextLedgerError.isInstance(e);

/**
 * An options object or a required argument is missing or out of range (`Agents`, `LlmCompactPolicy`,
 * `openSession`'s `countTokensOnWrite` without a `tokenizer` (or `Agents`' with a projector that has none), `read`'s
 * `fromSeq`, `append`'s `expectedSeq`, the log's `maxEventBytes`, the PostgreSQL log's `notify`, `pollMs`, `poolSize`
 * or a pool of one connection, a component description that is not `{ name, settings? }` given to
 * `contextProjectorFromDescription` or `compactPolicyFromDescription`, ...); `issues` name each field.
 * @example new InvalidOptionsError('LlmCompactPolicy', [{ path: 'maxItems', message: 'must be a non-negative integer, got -1' }])
 */
export class InvalidOptionsError extends ContextLedgerError {
  static override readonly code = 'INVALID_OPTIONS';
  /** What the options are for: `'Agents'`, `'LlmCompactPolicy'`, `'read'`, ... */
  readonly optionsOf: string;
  readonly issues: readonly ErrorIssue[];
  constructor(optionsOf: string, issues: readonly ErrorIssue[], options?: { readonly cause?: unknown }) {
    super(`invalid options for ${optionsOf}: ${issues.map((i) => (i.path === '' ? i.message : `${i.path}: ${i.message}`)).join('; ')}`, options);
    this.optionsOf = optionsOf;
    this.issues = issues;
  }
}
/** @deprecated use InvalidOptionsError.isInstance */ export const isInvalidOptionsError = (e: unknown): e is InvalidOptionsError => InvalidOptionsError.isInstance(e);

/**
 * A component named by a description or an option is not known: a tokenizer, an OpenAI encoding, a context projector,
 * a compact policy. Register it (a replay's `registry`), or pass it as an option.
 * @example new UnknownComponentError('tokenizer', 'my-tokenizer', ' (pass it in registry.tokenizers)')
 */
export class UnknownComponentError extends ContextLedgerError {
  static override readonly code = 'UNKNOWN_COMPONENT';
  constructor(
    /** `'projector'`, `'tokenizer'`, `'policy'`, `'OpenAI encoding'`, ... */
    readonly kind: string,
    /** The name as recorded (not always a string in a damaged description). */
    readonly componentName: unknown,
    /** Appended to the message as it is, e.g. `' (pass it in registry.tokenizers)'`. */
    hint = '',
  ) {
    super(`unknown ${kind}: ${showName(componentName)}${hint}`);
  }
}
/** @deprecated use UnknownComponentError.isInstance */ export const isUnknownComponentError = (e: unknown): e is UnknownComponentError => UnknownComponentError.isInstance(e);

/**
 * An optional peer dependency a feature needs is not installed (`gpt-tokenizer` for `openAiTokenizer`), or is a
 * version we cannot use.
 * @example new MissingDependencyError('gpt-tokenizer', "openAiTokenizer('o200k_base') needs gpt-tokenizer (^4): npm install gpt-tokenizer")
 */
export class MissingDependencyError extends ContextLedgerError {
  static override readonly code = 'MISSING_DEPENDENCY';
  constructor(
    readonly dependency: string,
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
  }
}
/** @deprecated use MissingDependencyError.isInstance */ export const isMissingDependencyError = (e: unknown): e is MissingDependencyError => MissingDependencyError.isInstance(e);

/**
 * A tokenizer that counts only texts given beforehand (`anthropicTokenCounter` after prefetch, a recorded-counts
 * tokenizer) was asked to count another.
 * @example new UncountedTextError('anthropic:claude-sonnet-4', "a text of 12 characters was not counted; prefetch the items' texts before projecting")
 */
export class UncountedTextError extends ContextLedgerError {
  static override readonly code = 'TEXT_NOT_COUNTED';
  constructor(
    readonly tokenizerName: string,
    detail: string,
  ) {
    super(`tokenizer ${tokenizerName}: ${detail}`);
  }
}
/** @deprecated use UncountedTextError.isInstance */ export const isUncountedTextError = (e: unknown): e is UncountedTextError => UncountedTextError.isInstance(e);

/**
 * A bridge was given what its framework does not accept: a message or item that is not an object, a message of an
 * unknown role, content that is neither text nor parts, a tool call or result without its call id
 * (`fromModelMessages`, `toModelMessages`, `prepareStep`, `onStepFinish`, `fromAgentInputItems`, `toAgentInputItems`,
 * `LedgerSession.addItems`, `callModelInputFilter`, `fromBaseMessages`, `toBaseMessages`, `trimMessages`). `path`
 * names the bad element (`[3].content[1].toolCallId`), `index` the top-level element. Nothing was converted or
 * recorded.
 * @example new BridgeInputError('ai-sdk', 'fromModelMessages', 1, '[1].content[0].toolCallId', 'must be a string, got undefined')
 */
export class BridgeInputError extends ContextLedgerError {
  static override readonly code = 'BRIDGE_INPUT';
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
    super(`${operation} (${bridge} bridge): ${path === '' ? 'the input' : path} ${problem}`);
  }
}
/** @deprecated use BridgeInputError.isInstance */ export const isBridgeInputError = (e: unknown): e is BridgeInputError => BridgeInputError.isInstance(e);

/**
 * A session history capability (the Agents SDK's `applyHistoryTransaction` / `applyHistoryMutations` on
 * `LedgerSession`) refused its arguments: `invalid` (not a transaction it can record: bad fields, or data the log
 * cannot hold as JSON: bytes, dates, bigints, accessors, cycles, proxies), `operation-conflict` (the operation id was
 * already applied with another transaction), `suffix-mismatch` (memory does not end with the expected suffix). The
 * message is the Agents SDK's own wording, never the items. Nothing was recorded; the operation id stays free.
 * @example new SessionHistoryError('chat-1', 'suffix-mismatch', 'op-7', 'Session history suffix no longer matches the transaction precondition.')
 */
export class SessionHistoryError extends ContextLedgerError {
  static override readonly code = 'SESSION_HISTORY';
  constructor(
    readonly sessionId: string,
    readonly problem: 'invalid' | 'operation-conflict' | 'suffix-mismatch',
    readonly operationId: string | undefined,
    detail: string,
    options?: { readonly cause?: unknown },
  ) {
    super(`session ${JSON.stringify(sessionId)}: ${detail}`, options);
  }
}
/** @deprecated use SessionHistoryError.isInstance */ export const isSessionHistoryError = (e: unknown): e is SessionHistoryError => SessionHistoryError.isInstance(e);

/**
 * A broken invariant inside context-ledger: a bug, please report it with the message.
 * @example throw new InternalError(`unhandled event ${JSON.stringify(event)}`)
 */
export class InternalError extends ContextLedgerError {
  static override readonly code = 'INTERNAL';
}
/** @deprecated use InternalError.isInstance */ export const isInternalError = (e: unknown): e is InternalError => InternalError.isInstance(e);
