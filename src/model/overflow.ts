// ContextOverflowError: a provider refused a request as longer than its context window, and how to recognise one.
import { ContextLedgerError } from '../base/errors.js';

/**
 * The provider refused a request as longer than the model's context window: OpenAI Chat and Responses 400
 * `context_length_exceeded`, Anthropic 400 `prompt is too long: N tokens > M maximum`, the same through the AI SDK
 * client (the adapters map them; `contextOverflowFrom(e)` does it for your own client, which may also throw it).
 * `requestTokens` and `limitTokens` are parsed from the provider's message when it gives them. The runtime records
 * `model.failed`, compacts, projects within a tighter budget and retries (`overflowRetries`); the run then fails with
 * reason `context-overflow`, this error as `cause`.
 * @example throw new ContextOverflowError('prompt is too long: 208310 tokens > 200000 maximum', { requestTokens: 208310, limitTokens: 200000 })
 */
export class ContextOverflowError extends ContextLedgerError {
  static override readonly code = 'CONTEXT_OVERFLOW';
  readonly requestTokens?: number;
  readonly limitTokens?: number;
  constructor(
    message: string,
    options: { readonly requestTokens?: number | undefined; readonly limitTokens?: number | undefined; readonly cause?: unknown } = {},
  ) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    if (options.requestTokens !== undefined) this.requestTokens = options.requestTokens;
    if (options.limitTokens !== undefined) this.limitTokens = options.limitTokens;
  }
}
/** @deprecated use ContextOverflowError.isInstance */ export const isContextOverflowError = (e: unknown): e is ContextOverflowError => ContextOverflowError.isInstance(e);

const tokensIn = (text: string, pattern: RegExp): number | undefined => {
  const match = pattern.exec(text);
  if (!match) return undefined;
  const value = Number(match[1]!.replace(/[,_]/g, ''));
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
};

/**
 * The request and limit token counts a provider's overflow message gives, when it gives them: Anthropic's
 * `prompt is too long: 208310 tokens > 200000 maximum`, OpenAI's `maximum context length is 128000 tokens. However,
 * your messages resulted in 130532 tokens` (or `you requested 140000 tokens`).
 * @example overflowTokensOf('prompt is too long: 12 tokens > 10 maximum') // { requestTokens: 12, limitTokens: 10 }
 */
export const overflowTokensOf = (message: string): { requestTokens?: number; limitTokens?: number } => {
  const requestTokens =
    tokensIn(message, /too long:\s*([\d,]+)\s*tokens\s*>/i) ?? tokensIn(message, /resulted in\s*([\d,]+)\s*tokens/i) ?? tokensIn(message, /you requested\s*([\d,]+)\s*tokens/i);
  const limitTokens = tokensIn(message, /tokens\s*>\s*([\d,]+)\s*maximum/i) ?? tokensIn(message, /maximum context length is\s*([\d,]+)\s*tokens/i);
  return { ...(requestTokens !== undefined ? { requestTokens } : {}), ...(limitTokens !== undefined ? { limitTokens } : {}) };
};

const OVERFLOW_CODES = new Set(['context_length_exceeded', 'string_above_max_length']);
const OVERFLOW_TEXT = /prompt is too long|context_length_exceeded|maximum context length|exceeds the context window|input is too long|too many tokens/i;

const field = (value: unknown, key: string): unknown =>
  value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;

const statusOf = (error: unknown): unknown => field(error, 'status') ?? field(error, 'statusCode');

/** The provider's error code wherever an SDK puts it: `error.code`, `error.error.code`, `error.error.error.code`. */
const codesOf = (error: unknown): unknown[] => [field(error, 'code'), field(field(error, 'error'), 'code'), field(field(field(error, 'error'), 'error'), 'code')];

/**
 * Whether the provider typed the error as a bad request (`invalid_request_error`, at any of the places an SDK puts it):
 * an error event inside a stream has no HTTP status, so this stands for the 400.
 */
const isInvalidRequest = (error: unknown): boolean =>
  [field(error, 'type'), field(field(error, 'error'), 'type'), field(field(field(error, 'error'), 'error'), 'type')].includes('invalid_request_error');

const messageTexts = (error: unknown): string => {
  const parts = [field(error, 'message'), field(field(error, 'error'), 'message'), field(field(field(error, 'error'), 'error'), 'message'), field(error, 'responseBody')];
  return parts.filter((p): p is string => typeof p === 'string').join('\n');
};

/**
 * The {@link ContextOverflowError} a provider SDK's error stands for, or undefined when it is another error: a 400
 * (or 413) whose code is `context_length_exceeded` or whose message says the prompt is too long (OpenAI, Anthropic,
 * the AI SDK's `APICallError` and `RetryError`). An error without a status (an error event inside a stream) stands
 * for one when its code says so, or when the provider typed it `invalid_request_error` and its message says so
 * (Anthropic's `event: error`). The SDK's error is kept as `cause`.
 * @example try { await client.create(request) } catch (e) { throw contextOverflowFrom(e) ?? e }
 */
export const contextOverflowFrom = (error: unknown): ContextOverflowError | undefined => {
  if (ContextOverflowError.isInstance(error)) return error;
  const last = field(error, 'lastError');
  if (last !== undefined && last !== error) {
    const inner = contextOverflowFrom(last);
    if (inner) return inner;
  }
  const status = statusOf(error);
  if (status !== 400 && status !== 413 && status !== undefined) return undefined;
  const text = messageTexts(error);
  const coded = codesOf(error).some((c) => typeof c === 'string' && OVERFLOW_CODES.has(c));
  if (!coded && !OVERFLOW_TEXT.test(text)) return undefined;
  if (status === undefined && !coded && !isInvalidRequest(error)) return undefined;
  const message = typeof field(error, 'message') === 'string' && (field(error, 'message') as string) !== '' ? (field(error, 'message') as string) : text;
  return new ContextOverflowError(message, { ...overflowTokensOf(text), cause: error });
};

/** Awaits `call`, turning a provider's overflow error into a {@link ContextOverflowError}. */
export const mapContextOverflow = async <T>(call: () => Promise<T>): Promise<T> => {
  try {
    return await call();
  } catch (error) {
    throw contextOverflowFrom(error) ?? error;
  }
};
