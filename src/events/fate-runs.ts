// Fates stored compactly: runs of consecutive memory items with one fate and rule, as one short string.
import { InvalidFateRunsError } from './errors.js';
import { FATES, FATE_RULES } from './fate-names.js';
import type { Fate, FateRule, ItemFate } from './shapes.js';

/** One run: `count` consecutive memory items (from `start`) with the same fate and rule. */
export interface FateRun {
  readonly start: number;
  readonly count: number;
  readonly fate: Fate;
  readonly rule: FateRule;
}

/** A fate with the id of the memory item it belongs to (when the ids were given). */
export interface ItemFateWithId extends ItemFate {
  readonly id?: string;
}

const fateSet: ReadonlySet<string> = new Set(FATES);
const ruleSet: ReadonlySet<string> = new Set(FATE_RULES);

const RUN_SOURCE = `(?:${FATES.join('|')}):(?:${FATE_RULES.join('|')})(?:\\*[1-9][0-9]*)?`;
const GROUP_SOURCE = `\\(${RUN_SOURCE}(?: ${RUN_SOURCE})*\\)\\*[1-9][0-9]*`;

/**
 * The grammar of a runs string: tokens separated by single spaces, each a run `fate:rule` or
 * `fate:rule*count`, or a repeated group of runs `(run run…)*times` (a tool call kept and its output
 * cleared, over and over); '' for no items.
 */
export const FATE_RUNS_PATTERN = new RegExp(`^(?:(?:${RUN_SOURCE}|${GROUP_SOURCE})(?: (?=.)|$))*$`);

interface SimpleRun {
  readonly fate: Fate;
  readonly rule: FateRule;
  readonly count: number;
}

const runText = (r: SimpleRun): string => (r.count === 1 ? `${r.fate}:${r.rule}` : `${r.fate}:${r.rule}*${r.count}`);
const sameRun = (a: SimpleRun | undefined, b: SimpleRun | undefined): boolean =>
  a !== undefined && b !== undefined && a.fate === b.fate && a.rule === b.rule && a.count === b.count;

/** Longest period of a repeated group the encoder looks for. */
const MAX_PERIOD = 4;

/**
 * Encodes fates given in source order (index 0, 1, 2…) as runs: `"dropped:maxTokens*9840 (kept:tail cleared:tier1)*40 kept:tail*8"`.
 * Its length grows with the number of fate changes that do not repeat, not with the number of items.
 * @example encodeFateRuns([{ fate: 'kept', rule: 'tail' }, { fate: 'kept', rule: 'tail' }]) // 'kept:tail*2'
 */
export const encodeFateRuns = (fates: readonly { readonly fate: Fate; readonly rule: FateRule }[]): string => {
  const runs: SimpleRun[] = [];
  let i = 0;
  while (i < fates.length) {
    const first = fates[i] as { fate: Fate; rule: FateRule };
    let j = i + 1;
    while (j < fates.length && (fates[j] as ItemFate).fate === first.fate && (fates[j] as ItemFate).rule === first.rule) j += 1;
    runs.push({ fate: first.fate, rule: first.rule, count: j - i });
    i = j;
  }
  return writeRuns(runs);
};

/** Writes simple runs, folding a repeating pattern of up to MAX_PERIOD runs into a group. */
const writeRuns = (runs: readonly SimpleRun[]): string => {
  const parts: string[] = [];
  let r = 0;
  while (r < runs.length) {
    let bestPeriod = 0;
    let bestTimes = 0;
    for (let period = 2; period <= MAX_PERIOD && r + 2 * period <= runs.length; period++) {
      let times = 1;
      for (;;) {
        const base = r + times * period;
        if (base + period > runs.length) break;
        let same = true;
        for (let k = 0; k < period && same; k++) same = sameRun(runs[r + k], runs[base + k]);
        if (!same) break;
        times += 1;
      }
      if (times >= 2 && period * times > bestPeriod * bestTimes) {
        bestPeriod = period;
        bestTimes = times;
      }
    }
    if (bestTimes >= 2) {
      parts.push(`(${runs.slice(r, r + bestPeriod).map(runText).join(' ')})*${bestTimes}`);
      r += bestPeriod * bestTimes;
    } else {
      parts.push(runText(runs[r] as SimpleRun));
      r += 1;
    }
  }
  return parts.join(' ');
};

const FATE_CODE = new Map<string, number>(FATES.map((f, i) => [f, i]));
const RULE_CODE = new Map<string, number>(FATE_RULES.map((r, i) => [r, i]));
const CODES = FATE_RULES.length;

/**
 * The code of a fate and its rule in a list of codes ({@link encodeFateCodes}): 1 + fate × rules + rule (0: no fate).
 * @example fateCode('kept', 'tail') // 2
 */
export const fateCode = (fate: Fate, rule: FateRule): number => {
  const f = FATE_CODE.get(fate);
  const r = RULE_CODE.get(rule);
  if (f === undefined || r === undefined) throw new InvalidFateRunsError(`unknown fate ${JSON.stringify(fate)} or rule ${JSON.stringify(rule)}`);
  return f * CODES + r + 1;
};

/**
 * Encodes one {@link fateCode} per source item, in source order, as runs (what {@link encodeReportFates} gives for the
 * same fates); throws when an item has no fate (code 0).
 * @example encodeFateCodes(Uint8Array.of(fateCode('kept', 'tail'), fateCode('kept', 'tail'))) // 'kept:tail*2'
 */
export const encodeFateCodes = (codes: Uint8Array): string => {
  const runs: SimpleRun[] = [];
  const n = codes.length;
  let i = 0;
  while (i < n) {
    const code = codes[i] as number;
    if (code === 0) throw new InvalidFateRunsError(`source item ${i} has no fate`);
    let j = i + 1;
    while (j < n && codes[j] === code) j += 1;
    runs.push({ fate: FATES[Math.floor((code - 1) / CODES)] as Fate, rule: FATE_RULES[(code - 1) % CODES] as FateRule, count: j - i });
    i = j;
  }
  return writeRuns(runs);
};

/**
 * Encodes a projection's `report.fates` (one per source item, any order) as runs; throws when an index is
 * missing or given twice, so a runs string always covers every source item exactly once.
 * @example encodeReportFates(projection.report.fates, projection.report.sourceItemCount)
 */
export const encodeReportFates = (fates: readonly ItemFate[], sourceItemCount: number): string => {
  // One small integer per item (fate × rule), 0 = no fate yet: no object per item.
  const codes = new Uint8Array(sourceItemCount);
  // Neighbouring fates mostly share fate and rule (long runs): their code is looked up once per change.
  let lastFate: unknown;
  let lastRule: unknown;
  let lastCode = 0;
  for (let k = 0; k < fates.length; k++) {
    const f = fates[k] as ItemFate;
    const index = f.index;
    if (!Number.isInteger(index) || index < 0 || index >= sourceItemCount) {
      throw new InvalidFateRunsError(`fate for index ${index}, but the source has ${sourceItemCount} item(s)`);
    }
    if (codes[index] !== 0) throw new InvalidFateRunsError(`source item ${index} has more than one fate`);
    if (f.fate !== lastFate || f.rule !== lastRule) {
      const fate = FATE_CODE.get(f.fate);
      const rule = RULE_CODE.get(f.rule);
      if (fate === undefined || rule === undefined) throw new InvalidFateRunsError(`source item ${index}: unknown fate ${JSON.stringify(f.fate)} or rule ${JSON.stringify(f.rule)}`);
      lastFate = f.fate;
      lastRule = f.rule;
      lastCode = fate * CODES + rule + 1;
    }
    codes[index] = lastCode;
  }
  return encodeFateCodes(codes);
};

const parseRun = (part: string): SimpleRun => {
  const star = part.indexOf('*');
  const head = star < 0 ? part : part.slice(0, star);
  const colon = head.indexOf(':');
  const fate = head.slice(0, colon);
  const rule = head.slice(colon + 1);
  const count = star < 0 ? 1 : Number(part.slice(star + 1));
  if (colon < 0 || !fateSet.has(fate) || !ruleSet.has(rule) || !Number.isSafeInteger(count) || count < 1 || !/^[0-9]*$/.test(star < 0 ? '' : part.slice(star + 1))) {
    throw new InvalidFateRunsError(`bad fate run ${JSON.stringify(part)}`);
  }
  return { fate: fate as Fate, rule: rule as FateRule, count };
};

/**
 * Decodes a runs string into simple runs (groups expanded), each with its start index. Throws a
 * InvalidFateRunsError naming the bad run.
 * @example decodeFateRuns('dropped:maxTokens*3 kept:tail') // [{start:0,count:3,...}, {start:3,count:1,...}]
 */
export const decodeFateRuns = (runs: string): FateRun[] => {
  if (runs === '') return [];
  const out: FateRun[] = [];
  let start = 0;
  const push = (run: SimpleRun): void => {
    out.push({ start, count: run.count, fate: run.fate, rule: run.rule });
    start += run.count;
  };
  const tokens = runs.split(' ');
  for (let t = 0; t < tokens.length; t++) {
    const token = tokens[t] as string;
    if (!token.startsWith('(')) {
      push(parseRun(token));
      continue;
    }
    const group: SimpleRun[] = [];
    let part = token.slice(1);
    for (;;) {
      const close = part.indexOf(')*');
      if (close >= 0) {
        group.push(parseRun(part.slice(0, close)));
        const times = part.slice(close + 2);
        if (!/^[1-9][0-9]*$/.test(times) || !Number.isSafeInteger(Number(times))) throw new InvalidFateRunsError(`bad fate run group repeat ${JSON.stringify(token)}`);
        for (let k = 0; k < Number(times); k++) for (const run of group) push(run);
        break;
      }
      group.push(parseRun(part));
      t += 1;
      if (t >= tokens.length) throw new InvalidFateRunsError(`unclosed fate run group ${JSON.stringify(token)}`);
      part = tokens[t] as string;
    }
  }
  return out;
};

/**
 * How many items a runs string covers and how many of them are dropped, without expanding repeated groups (time in
 * the length of the string, not in the number of items). Throws an InvalidFateRunsError naming the bad run.
 * @example countFateRuns('(kept:tail cleared:tier1)*500 dropped:maxItems*3') // { total: 1003, dropped: 3 }
 */
export const countFateRuns = (runs: string): { readonly total: number; readonly dropped: number } => {
  let total = 0;
  let dropped = 0;
  if (runs === '') return { total, dropped };
  const tokens = runs.split(' ');
  for (let t = 0; t < tokens.length; t++) {
    const token = tokens[t] as string;
    if (!token.startsWith('(')) {
      const run = parseRun(token);
      total += run.count;
      if (run.fate === 'dropped') dropped += run.count;
      continue;
    }
    let groupTotal = 0;
    let groupDropped = 0;
    let part = token.slice(1);
    for (;;) {
      const close = part.indexOf(')*');
      const run = parseRun(close >= 0 ? part.slice(0, close) : part);
      groupTotal += run.count;
      if (run.fate === 'dropped') groupDropped += run.count;
      if (close >= 0) {
        const times = part.slice(close + 2);
        if (!/^[1-9][0-9]*$/.test(times) || !Number.isSafeInteger(Number(times))) throw new InvalidFateRunsError(`bad fate run group repeat ${JSON.stringify(token)}`);
        total += groupTotal * Number(times);
        dropped += groupDropped * Number(times);
        break;
      }
      t += 1;
      if (t >= tokens.length) throw new InvalidFateRunsError(`unclosed fate run group ${JSON.stringify(token)}`);
      part = tokens[t] as string;
    }
  }
  return { total, dropped };
};

/** The number of items a runs string covers. */
export const fateRunsLength = (runs: string): number => decodeFateRuns(runs).reduce((n, r) => n + r.count, 0);

/**
 * Expands a runs string into one fate per source item, in source order; with `ids` (the ids of the
 * memory items the projection saw, in order: `memoryAt`'s entries), each fate carries its item's id.
 * Throws when `ids` has another length than the runs cover.
 * @example fatesOfRuns(event.fateRuns, ids).filter((f) => f.fate === 'dropped').map((f) => f.id)
 */
export const fatesOfRuns = (runs: string, ids?: readonly string[]): ItemFateWithId[] => {
  const decoded = decodeFateRuns(runs);
  const total = decoded.reduce((n, r) => n + r.count, 0);
  if (ids !== undefined && ids.length !== total) {
    throw new InvalidFateRunsError(`the fates cover ${total} item(s) but ${ids.length} id(s) were given`);
  }
  const out: ItemFateWithId[] = new Array<ItemFateWithId>(total);
  for (const run of decoded) {
    for (let k = 0; k < run.count; k++) {
      const index = run.start + k;
      out[index] = ids ? { index, id: ids[index] as string, fate: run.fate, rule: run.rule } : { index, fate: run.fate, rule: run.rule };
    }
  }
  return out;
};

/**
 * The fates a `context.projected` event recorded, one per memory item the projection saw, in order;
 * with `ids` (that memory's item ids, e.g. from `memoryAt`) each carries its id. Old (v1) events
 * read through the upcaster, so this works on them too.
 * @example const dropped = fatesOf(event, ids).filter((f) => f.fate === 'dropped')
 */
export const fatesOf = (event: { readonly fateRuns: string }, ids?: readonly string[]): ItemFateWithId[] => fatesOfRuns(event.fateRuns, ids);

/**
 * The ids sent at a `context.projected` event: the ids of the items whose fate is not `dropped`, in order.
 * @example sentIdsOf(event, memory.entries.map((e) => e.id))
 */
export const sentIdsOf = (event: { readonly fateRuns: string }, ids: readonly string[]): string[] =>
  fatesOfRuns(event.fateRuns, ids)
    .filter((f) => f.fate !== 'dropped')
    .map((f) => f.id as string);
