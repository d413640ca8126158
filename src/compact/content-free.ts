// "Content-free": an answer that, once parsed and stripped of invisible characters, holds nothing but empty values.

/** Unicode whitespace, format (Cf: zero-width spaces, joiners, BOM, word joiner) and control characters. */
const INVISIBLE = /[\p{White_Space}\p{Cf}\p{Cc}\u180e]/gu;
/** A whole answer in one Markdown code fence (```json ... ```). */
const FENCED = /^`{3,}[A-Za-z0-9_-]*\s([\s\S]*?)`{3,}$/;

const visible = (text: string): string => text.replace(INVISIBLE, '');

/** Whether a parsed value is made only of `null`, strings with no visible character, and arrays or objects of such. */
const emptyValue = (value: unknown): boolean => {
  if (value === null || value === undefined) return true;
  if (typeof value === 'string') return visible(value) === '';
  if (Array.isArray(value)) return value.every(emptyValue);
  if (typeof value === 'object') return Object.values(value as Record<string, unknown>).every(emptyValue);
  return false;
};

/**
 * Whether a summarizer's answer says nothing: after removing Unicode whitespace, format characters (zero-width
 * spaces, BOM, ...) and a code fence, it is empty, or it is JSON made only of empty values (`null`, `""`, `[]`,
 * `{}`, `{"goal": null}`, `[[""]]`, ...). Numbers, `false` and any visible text are content.
 * @example isContentFree('```json\nnull\n```') // true
 */
export const isContentFree = (answer: string): boolean => {
  const fenced = FENCED.exec(answer.trim());
  const text = visible(fenced ? fenced[1]! : answer);
  if (text === '') return true;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return false;
  }
  return emptyValue(parsed);
};
