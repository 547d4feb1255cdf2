// Request validation with ajv. Bodies are validated as sent (JSON has types); path and query
// values arrive as strings, so their validator coerces ("200" → 200, "a" → ["a"]). Defaults
// in the schemas are filled in, unknown fields are refused (each schema says
// additionalProperties: false).
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { InputError, type FieldError } from '../errors.js';
import type { JsonSchema } from '../model/schemas.js';
import { toFieldErrors } from '../model/validate.js';

// ajv-formats ships CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, useDefaults: true, coerceTypes: coerce ? 'array' : false });
  addFormats(ajv);
  return ajv;
}

export type Part = 'body' | 'query' | 'params';

/** One compiled validator per part of one route; compiled once at start-up. */
export class RequestValidator {
  private readonly fns: Partial<Record<Part, ValidateFunction>> = {};

  constructor(schemas: Partial<Record<Part, JsonSchema>>, ajv: Validators) {
    for (const part of ['params', 'query', 'body'] as const) {
      const schema = schemas[part];
      if (schema) this.fns[part] = (part === 'body' ? ajv.body : ajv.strings).compile(schema);
    }
  }

  /** Validates (and coerces/defaults in place) every part; all failures in one InputError. */
  check(values: Record<Part, unknown>): void {
    const errors: FieldError[] = [];
    for (const part of ['params', 'query', 'body'] as const) {
      const fn = this.fns[part];
      if (fn && !fn(values[part])) errors.push(...toFieldErrors(fn.errors, `/${part}`));
    }
    if (errors.length) {
      throw new InputError(`invalid request: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, errors);
    }
  }
}

export interface Validators {
  body: Ajv;
  strings: Ajv;
}

export const createValidators = (): Validators => ({ body: makeAjv(false), strings: makeAjv(true) });

/** The schema of "no body at all, or an empty JSON object" for routes that take none. */
export const NO_BODY: JsonSchema = { type: 'object', additionalProperties: false, properties: {} };
