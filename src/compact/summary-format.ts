// The model summary: a forgiving parse of the JSON answer, and its rendering into sections.

export interface StructuredSummary {
  readonly goal?: string;
  readonly completed: string[];
  readonly pending: string[];
  readonly decisions: string[];
  readonly errors: string[];
  readonly testResults: string[];
  readonly openQuestions: string[];
}

export const SUMMARY_KEYS = ['goal', 'completed', 'pending', 'decisions', 'errors', 'testResults', 'openQuestions'] as const;

const asText = (value: unknown): string | undefined => {
  if (value === null || value === undefined) return undefined;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.trim().length > 0 ? text.trim() : undefined;
};

const asList = (value: unknown): string[] => {
  if (Array.isArray(value)) return value.map(asText).filter((x): x is string => x !== undefined);
  const one = asText(value);
  return one === undefined ? [] : [one];
};

/**
 * Reads a summarizer's answer: the JSON between the first `{` and the last `}` (fences and prose
 * around it are fine); a string where a list was asked is a one-element list. Undefined when there
 * is no JSON object in the answer.
 */
export const parseSummaryAnswer = (answer: string): StructuredSummary | undefined => {
  const start = answer.indexOf('{');
  const end = answer.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.slice(start, end + 1));
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const o = parsed as Record<string, unknown>;
  const goal = asText(o['goal']);
  return {
    ...(goal !== undefined ? { goal } : {}),
    completed: asList(o['completed']),
    pending: asList(o['pending']),
    decisions: asList(o['decisions']),
    errors: asList(o['errors']),
    testResults: asList(o['testResults']),
    openQuestions: asList(o['openQuestions']),
  };
};

/** Renders the sections `## Goal`, `## Progress`, `## Pending`, `## Key Decisions`, `## Errors`, `## Test Results`, `## Open Questions`; empty ones are left out. */
export const renderSummary = (summary: StructuredSummary): string => {
  const sections: string[] = [];
  if (summary.goal) sections.push(`## Goal\n${summary.goal}`);
  const list = (heading: string, entries: readonly string[]): void => {
    if (entries.length > 0) sections.push(`## ${heading}\n${entries.map((e) => `- ${e}`).join('\n')}`);
  };
  list('Progress', summary.completed);
  list('Pending', summary.pending);
  list('Key Decisions', summary.decisions);
  list('Errors', summary.errors);
  list('Test Results', summary.testResults);
  list('Open Questions', summary.openQuestions);
  return sections.join('\n\n');
};
