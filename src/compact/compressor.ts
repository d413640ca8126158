// CompactPolicyMemoryCompressor: a CompactPolicy behind the older MemoryCompressor interface.
import type { ComponentDescription, MemorySnapshot } from '../events/index.js';
import { InvalidOptionsError } from '../base/errors.js';
import type { MemoryCompressor } from '../memory/index.js';
import { describePolicy, type CompactPolicy, type CompactResult } from './types.js';

/**
 * Runs `policy` on every compress (gated by its `shouldCompact` when it has one) and keeps the last result.
 * @example new InMemoryAgentMemory({ compressor: new CompactPolicyMemoryCompressor(new StructuredSummaryCompactPolicy({ maxItems: 20 })) })
 */
export class CompactPolicyMemoryCompressor implements MemoryCompressor {
  #last: CompactResult | null = null;

  constructor(readonly policy: CompactPolicy) {
    if (policy === null || policy === undefined) {
      throw new InvalidOptionsError('CompactPolicyMemoryCompressor', [{ path: 'policy', message: 'is required' }]);
    }
  }

  async compress(snapshot: MemorySnapshot): Promise<MemorySnapshot> {
    if (this.policy.shouldCompact && !(await this.policy.shouldCompact(snapshot))) return snapshot;
    const result = await this.policy.compact(snapshot);
    this.#last = result;
    return result.memory ?? { ...snapshot, summary: result.summary ?? snapshot.summary ?? null };
  }

  getLastResult(): CompactResult | null {
    return this.#last;
  }

  describe(): ComponentDescription {
    return describePolicy(this.policy);
  }
}
