// isRecord: the one test for "a plain JSON object" (not null, not an array), shared by every layer that reads untyped input.

/**
 * True for a non-null object that is not an array: what decoding, provider shapes and bridges treat as a JSON object.
 * @example isRecord({ a: 1 }) // true; isRecord([1]) // false; isRecord(null) // false
 */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
