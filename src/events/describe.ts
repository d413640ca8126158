// How a component (projector, policy, compressor) names itself in the log when it has no describe().
import type { ComponentDescription } from './shapes.js';

/**
 * The component's own `describe()`, else its class name with no settings, else `fallbackName`.
 * One rule for policies (`describePolicy`) and compressors, so both are recorded alike.
 * @example describeComponent(new MyPolicy(), 'CompactPolicy') // { name: 'MyPolicy', settings: {} }
 */
export const describeComponent = (component: { describe?: () => ComponentDescription }, fallbackName: string): ComponentDescription =>
  component.describe?.() ?? {
    name: component.constructor && component.constructor.name !== 'Object' ? component.constructor.name : fallbackName,
    settings: {},
  };
