// The projection's process-wide caches, in one place: what they hold, why a mutated item cannot make them stale, how to clear them.
//
// Projection is a pure function of (items, budget, projector), but measuring items is the expensive part of it, so
// the context layer remembers per-item facts across calls, keyed by the item object: its approximate size
// (measure.ts), its exact and lower-bound token counts per tokenizer (measure.ts), its Tier-1/Tier-2 rewritten copy
// (tiers.ts), its tool-call links (tool-pairs.ts), and per-history cost columns keyed by the first item (history.ts).
//
// Only FROZEN items are remembered. Items that come out of memory are deep-frozen by the fold, so an agent loop
// gets every hit; an item a caller still owns (a bridge passing the user's array, a test building items by hand) is
// measured afresh on every projection, and the library never freezes a caller's objects. A caller that mutates its
// own item after a projection therefore gets counts of the new text on the next one, never a stale budget.
// A history (the cost columns indexed by position) is cached only when every one of its items is frozen.
//
// `clearProjectionCaches()` drops everything (tests, or a long-lived process that wants the memory back at once);
// the caches are WeakMaps, so they never keep an item alive on their own.

/** A WeakMap that only remembers frozen keys: an unfrozen key always misses and is never stored. */
export class ProjectionCache<K extends object, V> {
  #map = new WeakMap<K, V>();

  /** `register: false` for a cache owned by another cached object (cleared with its owner). */
  constructor(readonly name: string, register = true) {
    if (register) registry.push(this);
  }

  get(key: K): V | undefined {
    return Object.isFrozen(key) ? this.#map.get(key) : undefined;
  }

  set(key: K, value: V): this {
    if (Object.isFrozen(key)) this.#map.set(key, value);
    return this;
  }

  has(key: K): boolean {
    return Object.isFrozen(key) && this.#map.has(key);
  }

  /** Forgets every entry. */
  clear(): void {
    this.#map = new WeakMap<K, V>();
  }
}

const registry: Array<{ readonly name: string; clear(): void }> = [];

/** Registers a cache that `clearProjectionCaches` empties (for caches that are not a ProjectionCache). */
export const registerProjectionCache = (name: string, clear: () => void): void => {
  registry.push({ name, clear });
};

/**
 * Empties every projection cache in the process. Projections stay correct without it (a mutated caller item is
 * never served from a cache); it only gives the memory back at once.
 * @example clearProjectionCaches();
 */
export const clearProjectionCaches = (): void => {
  for (const cache of registry) cache.clear();
};

/** The names of the registered caches (for docs and tests). */
export const projectionCacheNames = (): string[] => registry.map((c) => c.name);

/** True when every item is frozen, so position-indexed work over them may be cached. */
export const allFrozen = (items: readonly unknown[], from = 0): boolean => {
  for (let i = from; i < items.length; i++) {
    const item = items[i];
    if (typeof item === 'object' && item !== null && !Object.isFrozen(item)) return false;
  }
  return true;
};
