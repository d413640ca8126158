// What the step loop asks of the memory tools: the budget that pins working memory, and the recall hint for compactions.
import type { ContextBudget } from '../../context/index.js';
import { workingMemoryIndex, type MemoryState } from '../../memory/index.js';
import type { StepSession } from '../step-session.js';
import { recallToolNameOf } from './recall.js';

/**
 * The budget a step projects with when memory holds working-memory blocks: `pinnedPrefixItems` raised to cover the
 * working-memory item (and the summary before it); the same budget object otherwise.
 * @example budgetPinningWorkingMemory({ maxItems: 20 }, state).pinnedPrefixItems // 2 with a summary and blocks
 */
export const budgetPinningWorkingMemory = (budget: ContextBudget, state: MemoryState): ContextBudget => {
  const index = workingMemoryIndex(state);
  if (index < 0 || (budget.pinnedPrefixItems ?? 0) > index) return budget;
  return { ...budget, pinnedPrefixItems: index + 1 };
};

/** `recallTool` for compactions when the agent has a recall tool (its summaries then say how to recall). */
export const memoryToolCompactOptions = (s: StepSession): { recallTool?: string } => {
  const name = recallToolNameOf(s.agent.tools ?? []);
  return name !== undefined ? { recallTool: name } : {};
};
