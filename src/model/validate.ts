// Compiled validators. Compilation is done once per schema (ajv is slow to compile and fast
// to run), and errors are reported as field paths an operator can act on.
import { Ajv, type ValidateFunction, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { InputError, type FieldError } from '../errors.js';
import { kindSchemas, type JsonSchema } from './schemas.js';

// ajv-formats ships CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** `useDefaults`: fill in the defaults the schemas name (the API's and the specs folder's inputs). */
export function createAjv(opts: { useDefaults?: boolean } = {}): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, useDefaults: opts.useDefaults ?? false });
  addFormats(ajv);
  return ajv;
}

/** How many field errors an answer lists; the rest are only counted (a 1 MiB body can fail
 * in a hundred thousand places, and the answer must stay small whatever the request). */
export const MAX_FIELD_ERRORS = 20;
/** A path or message longer than this is cut: an unknown field's name is the caller's text. */
const MAX_ERROR_TEXT = 200;

const cut = (s: string): string => (s.length > MAX_ERROR_TEXT ? `${s.slice(0, MAX_ERROR_TEXT)}…` : s);

/** The first `max` of ajv's errors as field paths (mapped after the cut, never all of them). */
export function toFieldErrors(errors: ErrorObject[] | null | undefined, prefix = '', max = MAX_FIELD_ERRORS): FieldError[] {
  return (errors ?? []).slice(0, max).map((e) => {
    let path = prefix + e.instancePath;
    if (e.keyword === 'required') path += `/${(e.params as { missingProperty: string }).missingProperty}`;
    if (e.keyword === 'additionalProperties') path += `/${(e.params as { additionalProperty: string }).additionalProperty}`;
    const message = e.keyword === 'additionalProperties' ? 'unknown field' : (e.message ?? 'invalid');
    return { path: cut(path || '/'), message: cut(message) };
  });
}

/** A schema refusal: the first few field errors and how many there were in all. */
export class ValidationError extends InputError {
  constructor(
    what: string,
    errors: FieldError[],
    readonly errorCount: number = errors.length,
    code?: string,
  ) {
    const listed = errors
      .slice(0, 3)
      .map((e) => `${e.path} ${e.message}`)
      .join('; ');
    const more = errorCount > 3 ? ` (and ${errorCount - 3} more)` : '';
    super(`${what}: ${listed}${more}`, errors.slice(0, MAX_FIELD_ERRORS), code);
  }
}

/** Validates documents of every registered kind; unknown kinds are refused. */
export class DocValidator {
  private readonly compiled = new Map<string, { spec: ValidateFunction; status: ValidateFunction }>();

  constructor(schemas: Record<string, { spec: JsonSchema; status: JsonSchema }> = kindSchemas, ajv: Ajv = createAjv()) {
    for (const [kind, s] of Object.entries(schemas)) {
      this.compiled.set(kind, { spec: ajv.compile(s.spec), status: ajv.compile(s.status) });
    }
  }

  kinds(): string[] {
    return [...this.compiled.keys()];
  }

  /** Throws InputError naming every failing field (as /spec/... or /status/...). */
  check(kind: string, part: 'spec' | 'status', value: unknown): void {
    const v = this.compiled.get(kind);
    if (!v) throw new InputError(`unknown kind ${kind}`, [{ path: '/kind', message: 'unknown kind' }]);
    const fn = v[part];
    if (!fn(value)) {
      throw new ValidationError(`invalid ${kind} ${part}`, toFieldErrors(fn.errors, `/${part}`), fn.errors?.length ?? 1);
    }
  }
}
