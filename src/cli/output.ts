// What the CLI prints: aligned tables and short lines for people, JSON for scripts.
import { oneLine as oneLineOf } from '../base/index.js';

export interface Output {
  readonly json: boolean;
  /** A line on stdout. */
  line(text?: string): void;
  /** A JSON document on stdout (one line). */
  data(value: unknown): void;
  /** A note on stderr (never mixed into --json output). */
  note(text: string): void;
}

export const createOutput = (json: boolean, stdout: NodeJS.WritableStream = process.stdout, stderr: NodeJS.WritableStream = process.stderr): Output => ({
  json,
  line: (text = '') => void stdout.write(`${text}\n`),
  data: (value) => void stdout.write(`${JSON.stringify(value)}\n`),
  note: (text) => void stderr.write(`${text}\n`),
});

export type Align = 'left' | 'right';

/**
 * Formats rows as an aligned table: columns padded to their widest cell, numbers right-aligned by default.
 * @example table(['SESSION', 'EVENTS'], [['demo', 1943]]) // ['SESSION  EVENTS', 'demo       1943']
 */
export const table = (headers: readonly string[], rows: readonly (readonly (string | number)[])[], align: readonly Align[] = []): string[] => {
  const cells = rows.map((row) => row.map((c) => String(c)));
  const alignOf = (i: number): Align => align[i] ?? (rows.length > 0 && rows.every((r) => typeof r[i] === 'number') ? 'right' : 'left');
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const format = (row: readonly string[]): string =>
    row
      .map((cell, i) => (alignOf(i) === 'right' ? cell.padStart(widths[i] ?? 0) : i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [format(headers.map((h, i) => (alignOf(i) === 'right' ? h.padStart(widths[i] ?? 0) : h))), ...cells.map(format)];
};

/** Cuts a text to one line of at most `max` characters (80 in tables). */
export const oneLine = (text: string, max = 80): string => oneLineOf(text, max);

/** 12,345 */
export const num = (n: number | undefined): string => (n === undefined ? '-' : n.toLocaleString('en-US'));
