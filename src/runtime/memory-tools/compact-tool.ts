// compactTool: the model asks for a compaction with the agent's policy, done at the top of the next step.
import { z } from 'zod';
import { defineTool, type Tool } from '../tools.js';
import { ToolFailedError } from '../errors.js';
import { memoryAccessOf } from './access.js';

export interface CompactToolOptions {
  /** The tool's name (default `compact`). */
  readonly name?: string;
}

const parameters = z.object({
  focus: z.string().optional().describe('What the summary should keep in detail (e.g. "the failing test and its stack trace").'),
});

/**
 * A tool that schedules a compaction with the agent's `compactPolicy` at the top of the next step, before the model
 * is called: it records `compaction.requested` (so a resume or a re-run does the same), and the compaction records
 * `memory.compacted` with `reason: { kind: 'requested', instructions: focus }`. Without a policy it is an error result.
 * @example Agents.react({ modelClient, model, compactPolicy: new LlmCompactPolicy(client, 'm', 10), tools: [compactTool()] })
 */
export const compactTool = (options: CompactToolOptions = {}): Tool<typeof parameters> => {
  const name = options.name ?? 'compact';
  return defineTool({
    name,
    description:
      'Compact your memory now: older items are summarised by the agent\'s compaction policy at the start of the next step. ' +
      'Give a focus to say what the summary must keep in detail.',
    parameters,
    async execute(args, context) {
      const access = memoryAccessOf(context, name);
      if (!access.compactPolicy) throw new ToolFailedError(name, 'this agent has no compaction policy; memory cannot be compacted on request');
      const focus = args.focus?.trim();
      await access.record([{ type: 'compaction.requested', ...(focus ? { instructions: focus } : {}), step: context.step, callId: context.callId }]);
      return `Compaction scheduled for the start of the next step${focus ? ` (focus: ${focus})` : ''}.`;
    },
  });
};
