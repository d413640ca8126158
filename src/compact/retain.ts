// User messages a compaction keeps as items (retainUserMessages): the user's own words are never only summarised.
import { isUserMessage, textOf, type MemoryItem } from '../items/index.js';

/** `true`: every user message of the compacted span stays; `{ maxChars }`: the newest ones within that many characters. */
export type RetainUserMessages = boolean | { readonly maxChars: number };

/** A user message that carries no tool result (an Anthropic-shape `tool_result` part would be an orphan without its call). */
const isPlainUserMessage = (item: MemoryItem): boolean =>
  isUserMessage(item) && !(Array.isArray(item.content) && item.content.some((part) => part && (part.type === 'tool_result' || part.type === 'function_call_output')));

/**
 * The user messages of `span` a compaction keeps, in their order: all of them for `true`, none for `false` or
 * undefined, the newest within `maxChars` characters of text otherwise (the older ones go into the summary).
 * @example retainedUserMessages([userMessage('a'), assistantMessage('b'), userMessage('cc')], { maxChars: 2 }) // [userMessage('cc')]
 */
export const retainedUserMessages = (span: readonly MemoryItem[], retain: RetainUserMessages | undefined): MemoryItem[] => {
  if (!retain) return [];
  const users = span.filter(isPlainUserMessage);
  if (retain === true) return users;
  const kept: MemoryItem[] = [];
  let chars = 0;
  for (let i = users.length - 1; i >= 0; i--) {
    const size = textOf(users[i]).length;
    if (chars + size > retain.maxChars) break;
    chars += size;
    kept.unshift(users[i]!);
  }
  return kept;
};
