// Request validation with ajv. Bodies are validated as sent (JSON has types); path and query
// values arrive as strings, so their validator coerces ("200" → 200, "a" → ["a"]). Defaults
// in the schemas are filled in, unknown fields are refused (each schema says
// additionalProperties: false).
//
// What a refusal costs is bounded whatever the request: arrays longer than their schema's
// maxItems are refused before ajv looks at a single item (one error, with the code the schema
// names in LIMIT_CODE: TOO_MANY_TARGETS for bulk operations), and only the first
// MAX_FIELD_ERRORS errors are listed, with the total as errorCount.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FieldError } from '../errors.js';
import type { JsonSchema } from '../model/schemas.js';
import { MAX_FIELD_ERRORS, ValidationError, toFieldErrors } from '../model/validate.js';

// ajv-formats ships CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Schema annotation: the problem code of an array over its maxItems (default VALIDATION_FAILED).
 * An OpenAPI specification extension, so the published schema may carry it. */
export const LIMIT_CODE = 'x-limit-code';

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, useDefaults: true, coerceTypes: coerce ? 'array' : false });
  addFormats(ajv);
  ajv.addKeyword({ keyword: LIMIT_CODE, schemaType: 'string' });
  return ajv;
}

export type Part = 'body' | 'query' | 'params';

interface OverLimit {
  error: FieldError;
  code: string | undefined;
}

/** The first array of `value` longer than its schema's maxItems, following properties and items
 * (where the schema names them); O(depth × declared fields), never O(items) of a long array. */
export function overLimit(schema: JsonSchema | undefined, value: unknown, path: string): OverLimit | null {
  if (!schema || typeof schema !== 'object' || value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    const max = schema.maxItems;
    if (typeof max === 'number' && value.length > max) {
      return {
        error: { path, message: `must NOT have more than ${max} items (got ${value.length})` },
        code: schema[LIMIT_CODE] as string | undefined,
      };
    }
    const items = schema.items as JsonSchema | undefined;
    if (!items || typeof items !== 'object' || !hasArrays(items)) return null;
    for (let i = 0; i < value.length; i++) {
      const found = overLimit(items, value[i], `${path}/${i}`);
      if (found) return found;
    }
    return null;
  }
  const props = schema.properties as Record<string, JsonSchema> | undefined;
  if (!props) return null;
  for (const [name, sub] of Object.entries(props)) {
    if (Object.hasOwn(value, name)) {
      const found = overLimit(sub, (value as Record<string, unknown>)[name], `${path}/${name}`);
      if (found) return found;
    }
  }
  return null;
}

/** Whether a schema declares an array anywhere below (so items need a look). */
function hasArrays(schema: JsonSchema): boolean {
  if (schema.type === 'array' || schema.maxItems !== undefined) return true;
  // A property's schema may be a boolean (`true`), which has no arrays below.
  const props = schema.properties as Record<string, unknown> | undefined;
  return !!props && Object.values(props).some((s) => typeof s === 'object' && s !== null && hasArrays(s as JsonSchema));
}

/** One compiled validator per part of one route; compiled once at start-up. */
export class RequestValidator {
  private readonly fns: Partial<Record<Part, ValidateFunction>> = {};
  private readonly schemas: Partial<Record<Part, JsonSchema>>;

  constructor(schemas: Partial<Record<Part, JsonSchema>>, ajv: Validators) {
    this.schemas = schemas;
    for (const part of ['params', 'query', 'body'] as const) {
      const schema = schemas[part];
      if (schema) this.fns[part] = (part === 'body' ? ajv.body : ajv.strings).compile(schema);
    }
  }

  /** Validates (and coerces/defaults in place) every part; all failures in one InputError,
   * the first MAX_FIELD_ERRORS of them listed. */
  check(values: Record<Part, unknown>): void {
    for (const part of ['params', 'query', 'body'] as const) {
      const limit = overLimit(this.schemas[part], values[part], `/${part}`);
      if (limit) throw new ValidationError('invalid request', [limit.error], 1, limit.code);
    }
    const errors: FieldError[] = [];
    let count = 0;
    for (const part of ['params', 'query', 'body'] as const) {
      const fn = this.fns[part];
      if (!fn || fn(values[part])) continue;
      count += fn.errors?.length ?? 1;
      // No spread into push: the list may be long (it is cut, but never spread).
      for (const e of toFieldErrors(fn.errors, `/${part}`, MAX_FIELD_ERRORS - errors.length)) errors.push(e);
    }
    if (count) throw new ValidationError('invalid request', errors, count);
  }
}

export interface Validators {
  body: Ajv;
  strings: Ajv;
}

export const createValidators = (): Validators => ({ body: makeAjv(false), strings: makeAjv(true) });

/** The schema of "no body at all, or an empty JSON object" for routes that take none. */
export const NO_BODY: JsonSchema = { type: 'object', additionalProperties: false, properties: {} };
