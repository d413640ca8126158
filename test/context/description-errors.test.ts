// A malformed component description is the documented InvalidOptionsError with the path of what is wrong (never a raw TypeError); an unknown name is UnknownComponentError.
import { describe, expect, it } from 'vitest';
import { compactPolicyFromDescription } from '../../src/compact/index.js';
import { DefaultContextProjector, contextProjectorFromDescription, isUnknownComponentError } from '../../src/context/index.js';
import { isInvalidOptionsError, type InvalidOptionsError } from '../../src/base/errors.js';
import type { ComponentDescription } from '../../src/events/index.js';

const thrownBy = (build: () => unknown): unknown => {
  try {
    build();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
};

describe('component descriptions that are not { name, settings? }', () => {
  for (const [builder, build] of [
    ['contextProjectorFromDescription', (d: unknown) => contextProjectorFromDescription(d as ComponentDescription)],
    ['compactPolicyFromDescription', (d: unknown) => compactPolicyFromDescription(d as ComponentDescription)],
  ] as const) {
    it(`${builder}: null, undefined, a string, an array, {}, settings null or a list, a name that is not a string: InvalidOptionsError with the path`, () => {
      for (const [description, path, message] of [
        [null, '', /must be an object \{ name, settings \}, got null/],
        [undefined, '', /got undefined/],
        ['DefaultContextProjector', '', /got string/],
        [[], '', /got an array/],
        [{}, 'name', /expected string/],
        [{ name: 7, settings: {} }, 'name', /expected string/],
        [{ name: '', settings: {} }, 'name', /too small|>=1/],
        [{ name: 'DefaultContextProjector', settings: null }, 'settings', /expected record/],
        [{ name: 'DefaultContextProjector', settings: [1] }, 'settings', /expected record/],
      ] as const) {
        const error = thrownBy(() => build(description));
        expect(error).not.toBeInstanceOf(TypeError);
        expect(isInvalidOptionsError(error), `${JSON.stringify(description)}: ${String(error)}`).toBe(true);
        expect((error as InvalidOptionsError).optionsOf).toBe(builder);
        expect((error as InvalidOptionsError).issues[0]?.path).toBe(path);
        expect((error as InvalidOptionsError).issues[0]?.message).toMatch(message);
      }
    });

    it(`${builder}: an unknown name without settings is UnknownComponentError naming it`, () => {
      const error = thrownBy(() => build({ name: 'Nope' }));
      expect(isUnknownComponentError(error), String(error)).toBe(true);
      expect((error as Error).message).toMatch(/"Nope"/);
    });
  }

  it('a description without settings reads them as {} (as a decoded event does)', () => {
    expect(contextProjectorFromDescription({ name: 'DefaultContextProjector' } as ComponentDescription)).toBeInstanceOf(DefaultContextProjector);
    expect(compactPolicyFromDescription({ name: 'StructuredSummaryCompactPolicy' } as ComponentDescription).constructor.name).toBe('StructuredSummaryCompactPolicy');
  });
});
