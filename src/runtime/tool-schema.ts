// Tool parameters in three forms (a zod 4 schema, a zod 3 schema, a plain JSON Schema): JSON Schema for the provider and a validator for calls.
import { Ajv, type ValidateFunction } from 'ajv';
import { z } from 'zod';
import { InvalidOptionsError } from '../base/errors.js';
import { isRecord } from '../base/is-record.js';

/** A zod 3 schema, seen structurally (zod 3 is not a dependency): `_def.typeName` and `safeParse`. */
export interface Zod3Schema<Output = unknown> {
  readonly _def: { readonly typeName?: string };
  readonly _output: Output;
  safeParse(data: unknown): { success: true; data: Output } | { success: false; error: { issues: readonly { path: readonly (string | number)[]; message: string }[] } };
}

/** A JSON Schema of a tool's arguments: an object schema (`type: 'object'`), validated with ajv. */
export interface JsonSchemaParameters {
  readonly type: 'object';
  readonly properties?: Readonly<Record<string, unknown>>;
  readonly required?: readonly string[];
  readonly [key: string]: unknown;
}

/** What `parameters` of a tool may be. */
export type ToolParameters = z.ZodType | Zod3Schema | JsonSchemaParameters;

/** The arguments `execute` gets: the schema's output type, or a plain record for a JSON Schema. */
export type ToolArguments<P> = P extends z.ZodType ? z.output<P> : P extends Zod3Schema<infer O> ? O : Record<string, unknown>;

/** A tool's parameters, checked: the JSON Schema the provider is told and a validator of call arguments. */
export interface CompiledParameters {
  readonly kind: 'zod4' | 'zod3' | 'json-schema';
  readonly jsonSchema: Record<string, unknown>;
  /** The validated (and, for zod, parsed) arguments, or the reasons they are invalid. */
  validate(args: unknown): { ok: true; value: unknown } | { ok: false; message: string };
}

const isZod4 = (value: unknown): value is z.ZodType => isRecord(value) && isRecord(value['_zod']);
const isZod3 = (value: unknown): value is Zod3Schema =>
  isRecord(value) && !isZod4(value) && isRecord(value['_def']) && typeof (value as { safeParse?: unknown }).safeParse === 'function';

let ajv: Ajv | undefined;
const ajvInstance = (): Ajv => (ajv ??= new Ajv({ allErrors: true, strict: false }));

const issuesText = (issues: readonly { path: readonly PropertyKey[]; message: string }[]): string =>
  issues.map((issue) => (issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message)).join('; ');

// ---------------------------------------------------------------------------------------------
// zod 3 → JSON Schema (zod 3 has no converter of its own; the types tools use are covered, others are refused)

type Zod3Def = { typeName?: string; [key: string]: unknown };

const zod3ToJsonSchema = (schema: unknown, path: string): Record<string, unknown> => {
  const def = (schema as { _def?: Zod3Def })._def ?? {};
  const description = typeof (def as { description?: unknown }).description === 'string' ? { description: (def as { description: string }).description } : {};
  const inner = (key: string): Record<string, unknown> => zod3ToJsonSchema(def[key], path);
  switch (def.typeName) {
    case 'ZodString':
      return { type: 'string', ...description };
    case 'ZodNumber': {
      const isInt = Array.isArray(def['checks']) && (def['checks'] as { kind: string }[]).some((c) => c.kind === 'int');
      return { type: isInt ? 'integer' : 'number', ...description };
    }
    case 'ZodBoolean':
      return { type: 'boolean', ...description };
    case 'ZodNull':
      return { type: 'null', ...description };
    case 'ZodAny':
    case 'ZodUnknown':
      return { ...description };
    case 'ZodLiteral':
      return { const: def['value'], ...description };
    case 'ZodEnum':
      return { type: 'string', enum: def['values'], ...description };
    case 'ZodArray':
      return { type: 'array', items: inner('type'), ...description };
    case 'ZodOptional':
      return { ...inner('innerType'), ...description };
    case 'ZodNullable':
      return { anyOf: [inner('innerType'), { type: 'null' }], ...description };
    case 'ZodDefault':
      return { ...inner('innerType'), default: (def['defaultValue'] as () => unknown)(), ...description };
    case 'ZodUnion':
      return { anyOf: (def['options'] as unknown[]).map((o) => zod3ToJsonSchema(o, path)), ...description };
    case 'ZodRecord':
      return { type: 'object', additionalProperties: inner('valueType'), ...description };
    case 'ZodObject': {
      const shape = (def['shape'] as () => Record<string, unknown>)();
      const properties: Record<string, unknown> = {};
      const required: string[] = [];
      for (const [key, value] of Object.entries(shape)) {
        properties[key] = zod3ToJsonSchema(value, path ? `${path}.${key}` : key);
        const typeName = (value as { _def?: Zod3Def })._def?.typeName;
        if (typeName !== 'ZodOptional' && typeName !== 'ZodDefault') required.push(key);
      }
      return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false, ...description };
    }
    default:
      throw new InvalidOptionsError('a tool', [
        {
          path: 'parameters',
          message: `zod 3 type ${String(def.typeName)}${path ? ` at ${path}` : ''} has no JSON Schema here; use a zod 4 schema or a JSON Schema for this tool`,
        },
      ]);
  }
};

/**
 * Checks a tool's parameters and compiles them: a zod 4 schema (JSON Schema from zod's own converter), a zod 3
 * schema (converted here: objects, strings, numbers, booleans, enums, literals, arrays, unions, records,
 * optional, nullable, default), or a JSON Schema object (checked and compiled by ajv). Throws a TypeError
 * naming the tool when the parameters are none of these or cannot be converted.
 * @example compileParameters('read_file', { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] })
 */
export const compileParameters = (
  toolName: string,
  parameters: unknown,
  options: { readonly jsonSchema?: Record<string, unknown> | undefined } = {},
): CompiledParameters => {
  // A JSON Schema given beside the parameters (a replay re-sends the recorded one) is what the provider gets;
  // the parameters then only validate calls.
  const given = options.jsonSchema;
  const fail = (why: string): never => {
    throw new InvalidOptionsError(`tool ${JSON.stringify(toolName)}`, [{ path: '', message: why }]);
  };
  if (isZod4(parameters)) {
    let jsonSchema: Record<string, unknown> = given ?? {};
    if (!given) {
      try {
        const { $schema: _schema, ...rest } = z.toJSONSchema(parameters) as Record<string, unknown>;
        jsonSchema = rest;
      } catch (error) {
        fail(`its zod schema has no JSON Schema form (${(error as Error).message})`);
      }
    }
    if (!given && jsonSchema['type'] !== 'object') fail(`parameters must describe an object, got a zod schema of type ${JSON.stringify(jsonSchema['type'])}`);
    return {
      kind: 'zod4',
      jsonSchema,
      validate: (args) => {
        const parsed = z.safeParse(parameters, args);
        return parsed.success ? { ok: true, value: parsed.data } : { ok: false, message: z.prettifyError(parsed.error).replace(/\n/g, '; ') };
      },
    };
  }
  if (isZod3(parameters)) {
    let jsonSchema: Record<string, unknown> = given ?? {};
    if (!given) {
      try {
        jsonSchema = zod3ToJsonSchema(parameters, '');
      } catch (error) {
        fail(InvalidOptionsError.isInstance(error) ? (error.issues[0]?.message ?? error.message) : (error as Error).message);
      }
    }
    if (!given && jsonSchema['type'] !== 'object') fail(`parameters must be a zod object schema, got ${String(parameters._def.typeName)}`);
    return {
      kind: 'zod3',
      jsonSchema,
      validate: (args) => {
        const parsed = parameters.safeParse(args);
        return parsed.success ? { ok: true, value: parsed.data } : { ok: false, message: issuesText(parsed.error.issues) };
      },
    };
  }
  if (isRecord(parameters)) {
    if (parameters['type'] !== 'object') {
      fail(`parameters must be a zod 4 schema, a zod 3 schema or a JSON Schema with type 'object'; got an object with type ${JSON.stringify(parameters['type'])}`);
    }
    let validator: ValidateFunction | undefined;
    try {
      validator = ajvInstance().compile(parameters);
    } catch (error) {
      fail(`its JSON Schema is invalid: ${(error as Error).message}`);
    }
    const check = validator!;
    const { $schema: _schema, ...own } = parameters;
    return {
      kind: 'json-schema',
      jsonSchema: given ?? own,
      validate: (args) =>
        check(args) ? { ok: true, value: args } : { ok: false, message: ajvInstance().errorsText(check.errors, { dataVar: 'arguments', separator: '; ' }) },
    };
  }
  return fail(`parameters must be a zod 4 schema, a zod 3 schema or a JSON Schema object, got ${parameters === null ? 'null' : typeof parameters}`);
};
