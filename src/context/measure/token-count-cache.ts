// Token counts saved beside a checkpoint and loaded after a resume, keyed by a hash of the texts they count.
import * as crypto from 'node:crypto';
import { z } from 'zod';
import { ContextLedgerError } from '../../base/errors.js';
import type { MemoryItem } from '../../items/index.js';
import { ITEM_TOKEN_OVERHEAD, forEachProviderText, itemTokenMemo } from './items.js';
import type { Tokenizer } from './tokenizer.js';

/**
 * The token counts one tokenizer has made of some items, as plain JSON: `counts` maps the key of an item
 * ({@link tokenCountKey}: a hash of the texts its count depends on) to its count.
 * @example const snapshot = exportTokenCounts(memory.getItems(), tokenizer); // store it with the checkpoint
 */
export interface TokenCountSnapshot {
  readonly version: 1;
  /** The tokenizer's `name`; a snapshot is only loaded for a tokenizer of the same name. */
  readonly tokenizer: string;
  readonly counts: Readonly<Record<string, number>>;
}

/** The schema of a {@link TokenCountSnapshot} (what {@link importTokenCounts} accepts). */
export const TokenCountSnapshotSchema = z.strictObject({
  version: z.literal(1),
  tokenizer: z.string().min(1),
  counts: z.record(z.string().regex(/^[A-Za-z0-9_-]{22}$/, 'expected a token count key'), z.number().int().min(ITEM_TOKEN_OVERHEAD)),
});

const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string }).hash;
const sha256 = (text: string): string =>
  oneShot ? oneShot('sha256', text, 'base64url') : crypto.createHash('sha256').update(text).digest('base64url');

/**
 * The key of an item's count: the first 128 bits (base64url) of sha256 over the texts a provider is sent for
 * it, each prefixed by its length. Two items with the same texts cost the same tokens, whatever their ids.
 * @example tokenCountKey(userMessage('hi')) === tokenCountKey({ ...userMessage('hi'), id: 'other' }) // true
 */
export const tokenCountKey = (item: MemoryItem): string => {
  let text = '';
  forEachProviderText(item, (part) => {
    text += `${part.length}:${part}`;
  });
  return sha256(text).slice(0, 22);
};

/**
 * The counts `tokenizer` has already made of `items` (nothing is counted for the export), to save with a
 * checkpoint: after a resume, {@link importTokenCounts} gives them to the restored items, so the first
 * projection costs about what a warm one does.
 * @example await saveBeside(checkpoint, exportTokenCounts(memory.getItems(), projector.tokenizer))
 */
export const exportTokenCounts = (items: readonly MemoryItem[], tokenizer: Tokenizer): TokenCountSnapshot => {
  const memo = itemTokenMemo(tokenizer);
  const counts: Record<string, number> = {};
  for (const item of items) {
    const count = memo.known(item);
    if (count !== undefined) counts[tokenCountKey(item)] = count;
  }
  return { version: 1, tokenizer: tokenizer.name, counts };
};

/**
 * Gives `items` the counts of a {@link TokenCountSnapshot} made with the same tokenizer (by name); items whose
 * key is not in it are counted when a projection needs them. Returns how many items got a count. Throws
 * {@link InvalidTokenCountSnapshotError} for a snapshot that does not match its schema or names another
 * tokenizer.
 * @example importTokenCounts(session.memory.getItems(), snapshot, openAiTokenizer()) // 3,812
 */
export const importTokenCounts = (items: readonly MemoryItem[], snapshot: unknown, tokenizer: Tokenizer): number => {
  const parsed = TokenCountSnapshotSchema.safeParse(snapshot);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue ? issue.path.map(String).join('.') : '';
    throw new InvalidTokenCountSnapshotError(`${path === '' ? '(root)' : path}: ${issue?.message ?? 'invalid'}`);
  }
  if (parsed.data.tokenizer !== tokenizer.name) {
    throw new InvalidTokenCountSnapshotError(`tokenizer: the snapshot was made with ${JSON.stringify(parsed.data.tokenizer)}, not ${JSON.stringify(tokenizer.name)}`);
  }
  const counts = parsed.data.counts;
  const memo = itemTokenMemo(tokenizer);
  let imported = 0;
  for (const item of items) {
    if (memo.known(item) !== undefined) continue;
    const count = counts[tokenCountKey(item)];
    if (count === undefined) continue;
    memo.remember(item, count);
    imported += 1;
  }
  return imported;
};

/**
 * `importTokenCounts` got a snapshot that does not match its schema or was made with another tokenizer; the message
 * names the offending field.
 */
export class InvalidTokenCountSnapshotError extends ContextLedgerError {
  static override readonly code = 'INVALID_TOKEN_COUNT_SNAPSHOT';
  constructor(detail: string) {
    super(`invalid token count snapshot: ${detail}`);
  }
}
