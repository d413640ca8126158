// The data a visual report embeds: per step the exact items sent (re-projected, checked against the digest) and
// the dropped ids, per item its fates by step (from the audit), and the compactions.
import { budgetLimit, contextProjectorFromDescription, type ContextBudget, type ContextProjector } from '../../context/index.js';
import { FATES, FATE_RULES, canonicalJson, digestOf, fatesOf, type SessionEventOf } from '../../events/index.js';
import type { SessionEventLog } from '../../log/index.js';
import { initialMemoryState, memoryReducer, visibleEntries, type MemoryState } from '../../memory/index.js';
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
  /** The working-memory blocks the prompt carried (name, characters, limit), when memory held any. */
  readonly workingMemory?: StepAudit['workingMemory'];
  /** Set when a later rewind went back to before this step. */
  readonly rewound?: StepAudit['rewound'];
}

export interface ReportItem {
  readonly id: string;
  readonly kind: string;
  readonly preview: string;
  readonly enteredSeq: number;
  readonly leftSeq: number | null;
  readonly leftHow: string | null;
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
  /** Working-memory edits, recalls and rewinds, in order (absent keys: none). */
  readonly memoryTools?: { readonly notes: readonly NoteAudit[]; readonly recalls: readonly RecallAudit[]; readonly rewinds: readonly RewindAudit[] };
  /** Distinct items as sent (canonical JSON), shared by the steps that sent them. */
  readonly contents: readonly string[];
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
const reportAccounting = (steps: readonly ReportStep[], audited: ReadonlyMap<number, StepAudit>, totals: AccountTotals, priced: boolean): ReportAccounting => {
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
  onProgress?: (seq: number, head: number) => void,
  options: { readonly prices?: PriceTable } = {},
): Promise<ReportData> => {
  const audit = await auditSession(log, sessionId, { ...(onProgress ? { onProgress } : {}), ...(options.prices ? { prices: options.prices } : {}) });
  const head = audit.headSeq;
  const contents: string[] = [];
  const contentIndex = new Map<string, number>();
  const projectors = new Map<string, ContextProjector | null>();
  const steps: ReportStep[] = [];
  const auditSteps = new Map(audit.steps.map((s) => [s.seq, s]));
  let state: MemoryState = initialMemoryState;
  for await (const event of log.read(sessionId)) {
    if (event.type === 'context.projected') {
      const audited = auditSteps.get(event.seq);
      const step = stepOf(event, state, audited?.compacted ?? false, projectors, contents, contentIndex);
      const withTokens = audited?.memory.tokens !== undefined ? { ...step, memoryTokens: audited.memory.tokens } : step;
      steps.push({
        ...withTokens,
        ...(audited?.workingMemory ? { workingMemory: audited.workingMemory } : {}),
        ...(audited?.rewound ? { rewound: audited.rewound } : {}),
      });
    }
    state = memoryReducer(state, event);
  }
  return {
    sessionId,
    generatedFrom: { headSeq: head },
    fates: FATES,
    rules: FATE_RULES,
    steps,
    items: audit.items.map((item) => ({
      id: item.id,
      kind: item.kind,
      preview: item.preview,
      enteredSeq: item.entered.seq,
      leftSeq: item.left?.seq ?? null,
      leftHow: item.left ? (item.left.eventType === 'memory.compacted' ? `compacted by ${item.left.policy} (${item.left.trigger})` : item.left.eventType) : null,
      fates: item.fates.map((f) => [f.fromStep, f.toStep, fateIndex.get(f.fate) ?? 0, ruleIndex.get(f.rule) ?? 0] as const),
    })),
    compactions: audit.compactions,
    ...(audit.notes.length + audit.recalls.length + audit.rewinds.length > 0
      ? { memoryTools: { notes: audit.notes, recalls: audit.recalls, rewinds: audit.rewinds } }
      : {}),
    contents,
    totals: { ...audit.totals },
    accounting: reportAccounting(steps, auditSteps, audit.account, options.prices !== undefined),
  };
};

const stepOf = (
  event: SessionEventOf<'context.projected'>,
  state: MemoryState,
  compacted: boolean,
  projectors: Map<string, ContextProjector | null>,
  contents: string[],
  contentIndex: Map<string, number>,
): ReportStep => {
  const entries = visibleEntries(state);
  const fates = fatesOf(event, entries.map((e) => e.id));
  const key = JSON.stringify(event.projector);
  if (!projectors.has(key)) {
    try {
      projectors.set(key, contextProjectorFromDescription(event.projector));
    } catch {
      projectors.set(key, null);
    }
  }
  const projector = projectors.get(key) ?? null;
  const projection = projector ? projector.project(entries.map((e) => e.item), event.budget as ContextBudget) : null;
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
