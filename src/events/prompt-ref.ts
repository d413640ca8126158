// model.requested (v2) carries the system prompt and tool specs only when they change; this resolves the references.
import { EventDecodeError } from './errors.js';
import type { SessionEventOf } from './schemas.js';

/** The system prompt and tool specs a model request was made with. */
export interface RequestPrompt {
  readonly systemPrompt?: string;
  readonly tools: readonly Record<string, unknown>[];
}

export interface PromptResolver {
  /**
   * The prompt of a `model.requested` event, following `promptSeq` to the event that carried it. Events
   * must be given in seq order; throws when a reference points to an event it has not seen.
   */
  resolve(event: SessionEventOf<'model.requested'>): RequestPrompt;
}

/**
 * Resolves `model.requested` prompts while streaming a session (it keeps only the events that carried one).
 * @example const prompts = createPromptResolver(); for await (const e of log.read(id)) if (e.type === 'model.requested') prompts.resolve(e)
 */
export const createPromptResolver = (): PromptResolver => {
  const carried = new Map<number, RequestPrompt>();
  return {
    resolve(event) {
      if (event.promptSeq === undefined) {
        const prompt: RequestPrompt = {
          ...(event.systemPrompt !== undefined ? { systemPrompt: event.systemPrompt } : {}),
          tools: event.tools ?? [],
        };
        carried.set(event.seq, prompt);
        return prompt;
      }
      const prompt = carried.get(event.promptSeq);
      if (!prompt) {
        throw new EventDecodeError({
          sessionId: event.sessionId,
          seq: event.seq,
          issues: [{ path: 'promptSeq', message: `model.requested refers to the prompt of seq ${event.promptSeq}, which carries none (or was not read)` }],
        });
      }
      return prompt;
    },
  };
};
