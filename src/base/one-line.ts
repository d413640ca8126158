// oneLine: a text as one short line (white space folded, cut with "…"), as summaries, previews and CLI tables show it.

/**
 * Folds every run of white space to one space, trims, and cuts to at most `max` characters, the last being `…` when cut.
 * @example oneLine('npm test\n  3 failed', 12) // 'npm test 3 …'
 */
export const oneLine = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};
