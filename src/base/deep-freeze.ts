// deepFreeze: the one way to freeze a JSON value and everything in it (a decoded checkpoint, a law check's input).

/**
 * Freezes a JSON value (objects and arrays, nested) in place and returns it; an object already frozen is taken as
 * frozen throughout. A cycle does not loop: each object is frozen before its children are visited. (The memory fold
 * freezes its own state as immer does: `freezeLikeImmer` in src/memory/reducer.ts.)
 * @example const frozen = deepFreeze({ a: [{ b: 1 }] }); Object.isFrozen(frozen.a[0]) // true
 */
export const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
};
