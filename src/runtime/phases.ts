// The phases of a run by runtime: DeepResearch's plan → research → report machine, and ReAct's and CodeAct's one phase.
import { CODEACT_PROMPT } from './codeact.js';
import type { StepPlan } from './step.js';
import type { Tool } from './tools.js';

/** The three runtimes; all share one step loop and differ in their phases. */
export type RuntimeKind = 'react' | 'deepResearch' | 'codeAct';

/** The phase a run's next step is in: `plan`, `research` and `report` (DeepResearch) or `main` (ReAct, CodeAct). */
export type RunPhase = 'plan' | 'research' | 'report' | 'main';

const DEEP_RESEARCH_PLAN =
  'First write a short numbered research plan for the request (one step per line). Do not call tools and do not answer yet.';
const DEEP_RESEARCH_RESEARCH = 'Follow your research plan, using the tools. When you have what you need, reply without calling a tool.';
const DEEP_RESEARCH_REPORT = 'Write the final report for the request now, from your research. Do not call tools.';

const withSuffix = (base: string | undefined, suffix: string): string => (base ? `${base}\n\n${suffix}` : suffix);

/**
 * The numbered or bulleted lines of a plan (all non-empty lines when there are none).
 * @example parsePlan('Plan:\n1. read the docs\n2. write') // ['read the docs', 'write']
 */
export const parsePlan = (text: string): string[] => {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
  const marked = lines.map((l) => /^(?:\d+[.)]|[-*•])\s+(.*)$/.exec(l)?.[1]).filter((l): l is string => l !== undefined);
  return marked.length > 0 ? marked : lines;
};

/** The phase a run starts (or continues) in: DeepResearch plans first unless the open run already recorded its plan. */
export const firstPhase = (kind: RuntimeKind, hasPlan: boolean): RunPhase =>
  kind === 'deepResearch' ? (hasPlan ? 'research' : 'plan') : 'main';

/**
 * What follows a step of `phase` that made `toolCalls` calls: the next step's phase, or `finished` when its answer ends the run.
 * A plan is followed by research; research and `main` go on while the model calls tools; research then asks for the report.
 */
export const phaseAfter = (phase: RunPhase, toolCalls: number): RunPhase | 'finished' => {
  if (phase === 'plan') return 'research';
  if (toolCalls > 0) return phase;
  return phase === 'research' ? 'report' : 'finished';
};

/** The system prompt and tools of a step in `phase`: the agent's prompt with the phase's instruction, and its tools unless the phase forbids them. */
export const stepPlanFor = (
  phase: RunPhase,
  agent: { readonly kind: RuntimeKind; readonly systemPrompt: string | undefined; readonly tools: readonly Tool[] },
): StepPlan => {
  switch (phase) {
    case 'plan':
      return { systemPrompt: withSuffix(agent.systemPrompt, DEEP_RESEARCH_PLAN), tools: [] };
    case 'research':
      return { systemPrompt: withSuffix(agent.systemPrompt, DEEP_RESEARCH_RESEARCH), tools: agent.tools };
    case 'report':
      return { systemPrompt: withSuffix(agent.systemPrompt, DEEP_RESEARCH_REPORT), tools: [] };
    case 'main':
      return agent.kind === 'codeAct'
        ? { systemPrompt: withSuffix(agent.systemPrompt, CODEACT_PROMPT), tools: agent.tools }
        : { systemPrompt: agent.systemPrompt, tools: agent.tools };
  }
};
