// Tokenizers: the approximate default (characters / 4) and exact OpenAI encodings from gpt-tokenizer (an optional peer), loaded lazily.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { MissingDependencyError, UncountedTextError, UnknownComponentError } from '../../base/errors.js';

/**
 * Counts the tokens of a text. `name` identifies it in `describe()` and recorded events, so a replay can
 * rebuild the same tokenizer with {@link tokenizerFromName}.
 * @example const words: Tokenizer = { name: 'words', count: (text) => text.split(/\s+/).filter(Boolean).length };
 */
export interface Tokenizer {
  readonly name: string;
  /** The library and version that count (e.g. `gpt-tokenizer@4.0.0`), recorded because versions disagree on some texts. */
  readonly library?: string;
  count(text: string): number;
}

/**
 * The default tokenizer: `Math.ceil(text.length / 4)`, the usual rule of thumb for English text and code
 * with OpenAI and Anthropic encodings. Free to run; use {@link openAiTokenizer} when the budget must be exact.
 * @example approxTokenizer.count('hello world') // 3
 */
export const approxTokenizer: Tokenizer = Object.freeze({
  name: 'approx',
  count: (text: string): number => Math.ceil(text.length / 4),
});

/** The encodings gpt-tokenizer ships. */
export type OpenAiEncoding = 'o200k_base' | 'o200k_harmony' | 'cl100k_base' | 'p50k_base' | 'p50k_edit' | 'r50k_base';

const OPENAI_ENCODINGS: readonly OpenAiEncoding[] = ['o200k_base', 'o200k_harmony', 'cl100k_base', 'p50k_base', 'p50k_edit', 'r50k_base'];

interface EncodingModule {
  countTokens(text: string, options?: { disallowedSpecial?: Set<string> }): number;
}

const require = createRequire(import.meta.url);
// Special-token text such as `<|endoftext|>` in a message is ordinary text to a provider: count it as text, never throw.
const AS_PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
const openAiTokenizers = new Map<OpenAiEncoding, Tokenizer>();
/** `gpt-tokenizer@<version>` when it is installed (an optional peer), recorded beside the tokenizer's name. */
const gptTokenizerLibrary = (): string | undefined => {
  try {
    return `gpt-tokenizer@${(require('gpt-tokenizer/package.json') as { version: string }).version}`;
  } catch {
    return undefined;
  }
};

/** gpt-tokenizer is an optional peer dependency: loaded on the first count, with a clear message when it is not installed. */
const loadEncoding = (encoding: OpenAiEncoding): EncodingModule => {
  const path = `gpt-tokenizer/cjs/encoding/${encoding}`;
  try {
    return require(path) as EncodingModule;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'MODULE_NOT_FOUND' && String((error as Error).message).includes('gpt-tokenizer')) {
      throw new MissingDependencyError(
        'gpt-tokenizer',
        `openAiTokenizer('${encoding}') needs the optional peer dependency gpt-tokenizer (^4): run \`npm install gpt-tokenizer\`, or count with approxTokenizer`,
        { cause: error },
      );
    }
    throw error;
  }
};

/**
 * An exact tokenizer for an OpenAI encoding (default `o200k_base`: GPT-4o, GPT-4.1, GPT-5, o-series), counted
 * offline by gpt-tokenizer (an optional peer dependency: `npm install gpt-tokenizer`; without it the first `count`
 * throws saying so). The encoding's ranks (~0.3-0.5 s to load) are loaded on the first `count`, not on
 * import. One shared instance per encoding, so token counts memoized for it are shared too.
 * @example const tokenizer = openAiTokenizer(); tokenizer.count('hello world') // 2
 */
export const openAiTokenizer = (encoding: OpenAiEncoding = 'o200k_base'): Tokenizer => {
  if (!OPENAI_ENCODINGS.includes(encoding)) throw new UnknownComponentError('OpenAI encoding', String(encoding));
  const existing = openAiTokenizers.get(encoding);
  if (existing) return existing;
  let loaded: EncodingModule | undefined;
  const library = gptTokenizerLibrary();
  const tokenizer: Tokenizer = Object.freeze({
    name: `openai:${encoding}`,
    ...(library !== undefined ? { library } : {}),
    count: (text: string): number => {
      if (text.length === 0) return 0;
      loaded ??= loadEncoding(encoding);
      return loaded.countTokens(text, AS_PLAIN_TEXT);
    },
  });
  openAiTokenizers.set(encoding, tokenizer);
  return tokenizer;
};

/**
 * The built-in tokenizer with this name (`approx`, `openai:o200k_base`, ...), or undefined.
 * @example tokenizerFromName(projector.describe().settings.tokenizer as string)
 */
export const tokenizerFromName = (name: string): Tokenizer | undefined => {
  if (name === approxTokenizer.name) return approxTokenizer;
  if (name.startsWith('openai:')) {
    const encoding = name.slice('openai:'.length) as OpenAiEncoding;
    return OPENAI_ENCODINGS.includes(encoding) ? openAiTokenizer(encoding) : undefined;
  }
  return undefined;
};

/**
 * A tokenizer whose counts come from elsewhere (a provider's token-counting API): fetched before projecting
 * with `prefetch`, since `count` must be synchronous, and recorded in `context.projected` (`tokenCounts`, by
 * {@link textDigest}) so a replay rebuilds it with {@link recordedCountsTokenizer} instead of asking again.
 */
export interface PrefetchingTokenizer extends Tokenizer {
  /** Counts every text these items send that is not counted yet. */
  prefetch(texts: readonly string[], options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** The counts of these texts by {@link textDigest}, as `context.projected` records them. */
  countsOf(texts: readonly string[]): Record<string, number>;
}

/** Is this tokenizer one whose counts are fetched before projecting? */
export const isPrefetchingTokenizer = (tokenizer: Tokenizer): tokenizer is PrefetchingTokenizer =>
  typeof (tokenizer as Partial<PrefetchingTokenizer>).prefetch === 'function' && typeof (tokenizer as Partial<PrefetchingTokenizer>).countsOf === 'function';

/**
 * The key a text's count is recorded under: the first 16 hex digits of its sha256.
 * @example textDigest('hello') // '2cf24dba5fb0a30e'
 */
export const textDigest = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 16);

/**
 * A tokenizer that answers from recorded counts (`context.projected.tokenCounts`), for replaying a session
 * that counted with a remote tokenizer. A text with no recorded count throws, naming the tokenizer.
 * @example recordedCountsTokenizer('anthropic:claude-sonnet-4-5', event.tokenCounts).count('hello')
 */
export const recordedCountsTokenizer = (name: string, counts: Readonly<Record<string, number>>): Tokenizer =>
  Object.freeze({
    name,
    count: (text: string): number => {
      if (text.length === 0) return 0;
      const found = counts[textDigest(text)];
      if (found === undefined) throw new UncountedTextError(name, `no recorded count for a text of ${text.length} characters (digest ${textDigest(text)})`);
      return found;
    },
  });
