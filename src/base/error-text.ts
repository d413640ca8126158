// errorText: the text of anything thrown, never throwing itself (the one way to turn an error into a message).

const safely = (read: () => unknown): unknown => {
  try {
    return read();
  } catch {
    return undefined;
  }
};

/**
 * The message of a thrown value from any realm (vm contexts have their own `Error`): its string
 * `message` when it has one, else `String(value)`, else its JSON, else `[unprintable <type>]`. Never
 * throws, even for a value whose `message` getter or `toString` throws, or an object without a prototype.
 * @example errorText(new Error('disk full')) // 'disk full'; errorText({ toString() { throw 1 } }) // '[unprintable object]'
 */
export const errorText = (value: unknown): string => {
  if (typeof value === 'string') return value;
  if (value !== null && (typeof value === 'object' || typeof value === 'function')) {
    const message = safely(() => (value as { message?: unknown }).message);
    if (typeof message === 'string') return message;
  }
  const text = safely(() => String(value));
  if (typeof text === 'string') return text;
  const json = safely(() => JSON.stringify(value));
  if (typeof json === 'string') return json;
  return `[unprintable ${typeof value}]`;
};
