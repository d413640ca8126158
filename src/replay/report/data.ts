// The data a visual report embeds: per step the exact items sent (re-projected, checked against the digest) and
// the dropped ids, per item its fates by step (from the audit), and the compactions.
import { projectRequest, recordedRequestOptions } from '../../runtime/index.js';
import { projectorOfRecord, recordedRequestBudget } from '../reproject.js';
import { approxTokenizer, budgetLimit, projectorTokenizer, itemTokenCount, type ContextBudget, type ContextProjector, type Tokenizer } from '../../context/index.js';
import { FATES, FATE_RULES, fatesOf, type SessionEventOf } from '../../events/index.js';
import { canonicalJson, digestOf } from '../../base/index.js';
import type { SessionEventLog } from '../../log/index.js';
import { createMemoryFold, initialMemoryState, visibleEntries, type MemoryState } from '../../memory/index.js';
import type { ApprovalAudit } from '../approvals.js';
import type { AccountTotals, PriceTable } from '../accounting.js';
import { auditSession, type CompactionAudit, type NoteAudit, type RecallAudit, type RewindAudit, type StepAudit } from '../audit.js';

/** One step as the report shows it. Fates and rules are indices into `ReportData.fates` / `ReportData.rules`. */
export interface ReportStep {
  readonly step: number;
  readonly seq: number;
  readonly memoryItems: number;
  readonly memoryTokens: number | null;
  readonly sentItems: number;
  readonly sentTokens: number | null;
  readonly maxTokens: number | null;
  readonly compacted: boolean;
  readonly notes: readonly string[];
  /** Whether the re-projection matched the recorded digest (null: the projector could not be rebuilt). */
  readonly verified: boolean | null;
  /** The items sent, in order: [content index (into `contents`, -1 when not re-projected), item id, fate, rule]. */
  readonly sent: readonly (readonly [number, string, number, number])[];
  /** The items dropped: [item id, rule]. */
  readonly dropped: readonly (readonly [string, number])[];
  /** The working-memory blocks the prompt carried (name, characters, limit, and the text: an index into `workingMemoryTexts`), when memory held any. */
  readonly workingMemory?: ReportWorkingMemory;
  /** Set when a later rewind went back to before this step. */
  readonly rewound?: StepAudit['rewound'];
  /** The step's model call, from `model.requested` / `model.responded` (null when the step recorded none). */
  readonly call: ReportModelCall | null;
}

/** The working memory a step's prompt carried: its item id and each block (its text shared through `ReportData.workingMemoryTexts`). */
export interface ReportWorkingMemory {
  readonly id: string;
  readonly blocks: readonly { readonly name: string; readonly chars: number; readonly maxChars?: number; readonly description?: string; readonly textIndex: number }[];
}

/** One model call as the report shows it: latency, usage and, when prices were given, cost. */
export interface ReportModelCall {
  readonly model: string | null;
  readonly latencyMs: number | null;
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  readonly cachedInputTokens: number | null;
  /** In the price table's currency; null without a price for the model. */
  readonly cost: number | null;
}

/** Prices per model, per million tokens (the audit's price table): `input`, `output`, optionally `cachedInput`. */
export type ReportPrices = PriceTable;

/**
 * What other features add to the report without changing it: extra timeline lines (one value per step, in the order
 * of `steps`, null where there is none) and badges on items (by item id). Documented in docs/audit.md.
 */
export interface ReportExtras {
  readonly timeline: readonly { readonly name: string; readonly color: string; readonly values: readonly (number | null)[] }[];
  readonly badges: Readonly<Record<string, readonly string[]>>;
}

/** Options of {@link reportData}. */
export interface ReportDataOptions {
  readonly onProgress?: (seq: number, head: number) => void;
  /** Prices per model: each model call then shows its cost. */
  readonly prices?: ReportPrices;
  readonly extras?: Partial<ReportExtras>;
}

export interface ReportItem {
  readonly id: string;
  readonly kind: string;
  readonly preview: string;
  readonly enteredSeq: number;
  readonly leftSeq: number | null;
  readonly leftHow: string | null;
  /** For a placeholder a compaction wrote into memory: the id of the item it stands for. */
  readonly replaces: string | null;
  /** [fromStep, toStep, fate, rule] */
  readonly fates: readonly (readonly [number, number, number, number])[];
}

export interface ReportData {
  readonly sessionId: string;
  readonly generatedFrom: { readonly headSeq: number };
  readonly fates: readonly string[];
  readonly rules: readonly string[];
  readonly steps: readonly ReportStep[];
  readonly items: readonly ReportItem[];
  readonly compactions: readonly CompactionAudit[];
  /** Every call that asked for approval: pending or decided, who decided and why. */
  readonly approvals: readonly ApprovalAudit[];
  /** Working-memory edits, recalls and rewinds, in order (absent keys: none). */
  readonly memoryTools?: { readonly notes: readonly NoteAudit[]; readonly recalls: readonly RecallAudit[]; readonly rewinds: readonly RewindAudit[] };
  /** Distinct items as sent (canonical JSON), shared by the steps that sent them. */
  readonly contents: readonly string[];
  /** Distinct working-memory block texts, shared by the steps whose prompt carried them (`steps[].workingMemory`). */
  readonly workingMemoryTexts: readonly string[];
  /** The tokens of each of `contents`, counted with the step's tokenizer (approximate when it recorded none). */
  readonly contentTokens: readonly number[];
  readonly extras: ReportExtras;
  readonly totals: Record<string, number>;
  /** Cost and cacheable prefix, for the timeline's cost and prefix lines. */
  readonly accounting: ReportAccounting;
}

/** Per step (parallel to `steps`): cacheable prefix tokens and items, and cost (null without prices or usage). */
export interface ReportAccounting {
  /** [prefix tokens, prefix items, cost] per step. */
  readonly steps: readonly (readonly [number | null, number | null, number | null])[];
  /** `measured`: priced from the provider's usage; `estimated`: from our counts (the prefix as cached); null: no prices. */
  readonly cost: 'measured' | 'estimated' | null;
  readonly totals: AccountTotals;
}

/** The timeline's figures from the audit's steps: the provider's usage priced where every call has it, else our estimate. */
const reportAccounting = (steps: readonly Pick<ReportStep, 'seq'>[], audited: ReadonlyMap<number, StepAudit>, totals: AccountTotals, priced: boolean): ReportAccounting => {
  const accounts = steps.map((s) => audited.get(s.seq)?.account);
  const measured = priced && accounts.some((a) => a?.usage !== undefined) && accounts.every((a) => a === undefined || a.cost !== undefined);
  return {
    steps: accounts.map((a) => [
      a?.cacheablePrefix?.tokens ?? null,
      a?.cacheablePrefix?.items ?? null,
      (measured ? a?.cost : a?.estimate?.cost) ?? null,
    ] as const),
    cost: priced ? (measured ? 'measured' : 'estimated') : null,
    totals,
  };
};

const fateIndex = new Map<string, number>(FATES.map((f, i) => [f, i]));
const ruleIndex = new Map<string, number>(FATE_RULES.map((r, i) => [r, i]));

/**
 * Collects what the report shows. Reads the session twice: once for the audit, once to re-project every step.
 * @example const data = await reportData(log, 'demo'); data.steps[0].sent
 */
export const reportData = async (
  log: SessionEventLog,
  sessionId: string,
  progressOrOptions?: ((seq: number, head: number) => void) | ReportDataOptions,
  moreOptions: ReportDataOptions = {},
): Promise<ReportData> => {
  const options: ReportDataOptions = { ...(typeof progressOrOptions === 'function' ? { onProgress: progressOrOptions } : (progressOrOptions ?? {})), ...moreOptions };
  const onProgress = options.onProgress;
  const audit = await auditSession(log, sessionId, { ...(onProgress ? { onProgress } : {}), ...(options.prices ? { prices: options.prices } : {}) });
  const contentTokens: number[] = [];
  const calls = new Map<number, { model: string | null; latencyMs: number | null; usage: Record<string, unknown> | null }>();
  const head = audit.headSeq;
  const contents: string[] = [];
  const contentIndex = new Map<string, number>();
  const workingMemoryTexts: string[] = [];
  const workingMemoryIndex = new Map<string, number>();
  const projectors = new Map<string, ContextProjector | null>();
  const steps: Omit<ReportStep, 'call'>[] = [];
  const auditSteps = new Map(audit.steps.map((s) => [s.seq, s]));
  // Memory, folded as the events come and built only at a step (one copy of its entries per step, not one per event).
  const memory = createMemoryFold(initialMemoryState);
  const erasedSeqs = new Set<number>();
  for await (const event of log.read(sessionId)) {
    if (event.erased !== undefined) erasedSeqs.add(event.seq);
    if (event.type === 'model.requested' && event.step !== undefined) calls.set(event.step, { model: event.model, latencyMs: null, usage: null });
    if (event.type === 'model.responded' && event.step !== undefined) {
      const call = calls.get(event.step) ?? { model: null, latencyMs: null, usage: null };
      calls.set(event.step, { ...call, latencyMs: event.durationMs ?? call.latencyMs, usage: event.usage ?? call.usage });
    }
    if (event.type === 'context.projected') {
      const state = memory.result();
      const audited = auditSteps.get(event.seq);
      let step = stepOf(event, state, audited?.compacted ?? false, projectors, contents, contentIndex, contentTokens);
      // a step that held erased content cannot re-project to its recorded digest: not checked, rather than a mismatch
      if (step.verified === false && erasedSeqs.size > 0 && (event.erased !== undefined || state.entries.some((e) => erasedSeqs.has(Number(e.id.slice(0, e.id.indexOf(':'))))))) step = { ...step, verified: null };
      // Every figure is the audit's, as the CLI's are (one source for the numbers both show).
      const figures = audited
        ? { ...step, memoryItems: audited.memory.items, memoryTokens: audited.memory.tokens ?? null, sentItems: audited.sent.items, sentTokens: audited.sent.tokens ?? null }
        : step;
      steps.push({
        ...figures,
        ...(audited?.workingMemory ? { workingMemory: workingMemoryOf(audited.workingMemory, workingMemoryTexts, workingMemoryIndex) } : {}),
        ...(audited?.rewound ? { rewound: audited.rewound } : {}),
      });
    }
    memory.add(event);
  }
  // A call's cost is the audit's when it priced the step (one source for the figure), else priced here.
  const withCalls = steps.map((s) => {
    const call = modelCallOf(calls.get(s.step), options.prices);
    const audited = auditSteps.get(s.seq)?.account?.cost;
    return { ...s, call: call && typeof audited === 'number' ? { ...call, cost: audited } : call };
  });
  return {
    sessionId,
    generatedFrom: { headSeq: head },
    fates: FATES,
    rules: FATE_RULES,
    steps: withCalls,
    items: audit.items.map((item) => ({
      id: item.id,
      kind: item.kind,
      preview: item.erased ? `[erased at ${item.erased.at}${item.erased.by !== undefined ? ` by ${item.erased.by}` : ''}: ${item.erased.reason}]` : item.preview,
      enteredSeq: item.entered.seq,
      leftSeq: item.left?.seq ?? null,
      leftHow: item.left ? (item.left.eventType === 'memory.compacted' ? `compacted by ${item.left.policy} (${item.left.trigger})` : item.left.eventType) : null,
      replaces: item.replaces ?? null,
      fates: item.fates.map((f) => [f.fromStep, f.toStep, fateIndex.get(f.fate) ?? 0, ruleIndex.get(f.rule) ?? 0] as const),
    })),
    compactions: audit.compactions,
    approvals: audit.approvals,
    ...(audit.notes.length + audit.recalls.length + audit.rewinds.length > 0
      ? { memoryTools: { notes: audit.notes, recalls: audit.recalls, rewinds: audit.rewinds } }
      : {}),
    contents,
    contentTokens,
    workingMemoryTexts,
    extras: { timeline: [...(options.extras?.timeline ?? [])], badges: { ...options.extras?.badges } },
    totals: { ...audit.totals },
    accounting: reportAccounting(steps, auditSteps, audit.account, options.prices !== undefined),
  };
};

/** A step's working memory for the report: each block's text stored once in `texts` and named by index. */
const workingMemoryOf = (audited: NonNullable<StepAudit['workingMemory']>, texts: string[], index: Map<string, number>): ReportWorkingMemory => ({
  id: audited.id,
  blocks: audited.blocks.map(({ text, ...block }) => {
    let at = index.get(text);
    if (at === undefined) {
      at = texts.length;
      texts.push(text);
      index.set(text, at);
    }
    return { ...block, textIndex: at };
  }),
});

const countOf = (usage: Record<string, unknown> | null, ...keys: string[]): number | null => {
  for (const key of keys) if (typeof usage?.[key] === 'number') return usage[key] as number;
  return null;
};

const modelCallOf = (call: { model: string | null; latencyMs: number | null; usage: Record<string, unknown> | null } | undefined, prices: ReportPrices | undefined): ReportModelCall | null => {
  if (!call) return null;
  const inputTokens = countOf(call.usage, 'inputTokens', 'input_tokens', 'prompt_tokens');
  const outputTokens = countOf(call.usage, 'outputTokens', 'output_tokens', 'completion_tokens');
  const cachedInputTokens = countOf(call.usage, 'cachedInputTokens');
  const price = call.model !== null ? prices?.[call.model] : undefined;
  const cached = Math.min(cachedInputTokens ?? 0, inputTokens ?? 0);
  const cost =
    price && inputTokens !== null && outputTokens !== null
      ? ((inputTokens - cached) * price.input + cached * (price.cachedInput ?? price.input) + outputTokens * price.output) / 1_000_000
      : null;
  return { model: call.model, latencyMs: call.latencyMs, inputTokens, outputTokens, cachedInputTokens, cost };
};

const tokenizerOf = (projector: ContextProjector | null): Tokenizer => (projector && projectorTokenizer(projector)) ?? approxTokenizer;

const stepOf = (
  event: SessionEventOf<'context.projected'>,
  state: MemoryState,
  compacted: boolean,
  projectors: Map<string, ContextProjector | null>,
  contents: string[],
  contentIndex: Map<string, number>,
  contentTokens: number[],
): Omit<ReportStep, 'call'> => {
  const entries = visibleEntries(state);
  const fates = fatesOf(event, entries.map((e) => e.id));
  const key = JSON.stringify(event.projector);
  if (!projectors.has(key) || event.tokenCounts !== undefined) {
    try {
      projectors.set(key, projectorOfRecord(event));
    } catch {
      projectors.set(key, null);
    }
  }
  const projector = projectors.get(key) ?? null;
  // A v3 projection budgeted the whole request: re-project it with the recorded allowance.
  const whole = projector ? recordedRequestBudget(event, projector) : undefined;
  const projection = projector
    ? whole
      ? projectRequest(projector, entries.map((e) => e.item), event.budget as ContextBudget, whole.request, whole.tokenizer, recordedRequestOptions(whole.request, state))
      : projector.project(entries.map((e) => e.item), event.budget as ContextBudget)
    : null;
  const sentFates = fates.filter((f) => f.fate !== 'dropped');
  const sent = sentFates.map((f, i) => {
    let index = -1;
    const item = projection?.items[i];
    if (item !== undefined) {
      const text = canonicalJson(item);
      index = contentIndex.get(text) ?? -1;
      if (index < 0) {
        index = contents.length;
        contents.push(text);
        contentTokens.push(itemTokenCount(item, tokenizerOf(projector)));
        contentIndex.set(text, index);
      }
    }
    return [index, f.id as string, fateIndex.get(f.fate) ?? 0, ruleIndex.get(f.rule) ?? 0] as const;
  });
  const maxTokens = event.budget['maxTokens'];
  return {
    step: event.step ?? 0,
    seq: event.seq,
    memoryItems: fates.length,
    memoryTokens: event.report.sourceTokens ?? null,
    sentItems: sentFates.length,
    sentTokens: event.report.projectedTokens ?? null,
    maxTokens: typeof maxTokens === 'number' ? (budgetLimit(maxTokens) ?? null) : null,
    compacted,
    notes: event.report.notes,
    verified: projection ? digestOf(projection.items) === event.digest : null,
    sent,
    dropped: fates.filter((f) => f.fate === 'dropped').map((f) => [f.id as string, ruleIndex.get(f.rule) ?? 0] as const),
  };
};
