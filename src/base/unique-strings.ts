// uniqueStrings: lists merged in order with each string once (file lists, failed commands carried across compactions).

/**
 * The strings of `lists` in order, each kept at its first place; an absent list counts as empty.
 * @example uniqueStrings(['a.ts', 'b.ts'], undefined, ['b.ts', 'c.ts']) // ['a.ts', 'b.ts', 'c.ts']
 */
export const uniqueStrings = (...lists: readonly (readonly string[] | undefined)[]): string[] => {
  const seen = new Set<string>();
  for (const list of lists) for (const value of list ?? []) seen.add(value);
  return [...seen];
};
