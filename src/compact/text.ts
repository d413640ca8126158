// Summary text helpers shared by the policies: bounded previous summaries.

/** Cuts text to at most `max` characters by dropping the oldest (leading) text first. */
export const keepNewestChars = (text: string, max: number): string => {
  if (max <= 0) return '';
  if (text.length <= max) return text;
  const marker = '[… earlier summary cut …]\n';
  if (max <= marker.length) return text.slice(text.length - max);
  return marker + text.slice(text.length - (max - marker.length));
};

export const DEFAULT_MAX_SUMMARY_CHARS = 4000;
