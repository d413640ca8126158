// The hex session key and the seq bound every engine shares (LevelDB's keys, PostgreSQL's session_key column).
//
// A session id is written as 4 hex digits per UTF-16 code unit, so any non-empty JS string (separators, NUL, '/',
// '..', lone surrogates) maps to a distinct key of the digits 0-9a-f, sorted as the ids' code units are.

export const encodeSessionId = (id: string): string => {
  let out = '';
  for (let i = 0; i < id.length; i++) out += id.charCodeAt(i).toString(16).padStart(4, '0');
  return out;
};

export const decodeSessionId = (encoded: string): string => {
  let out = '';
  for (let i = 0; i < encoded.length; i += 4) out += String.fromCharCode(parseInt(encoded.slice(i, i + 4), 16));
  return out;
};

/** The largest seq a session holds (the LevelDB key encoding's bound, kept by every engine). */
export const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/**
 * `compute` memoised per key, for what an engine derives from a session id on every call (its hex key, a key prefix, a
 * NOTIFY tag): at most `limit` entries, all dropped when full (the few sessions a process writes stay cheap).
 */
export const boundedMemo = (limit: number, compute: (key: string) => string): ((key: string) => string) => {
  const known = new Map<string, string>();
  return (key) => {
    let value = known.get(key);
    if (value === undefined) {
      value = compute(key);
      if (known.size >= limit) known.clear();
      known.set(key, value);
    }
    return value;
  };
};
