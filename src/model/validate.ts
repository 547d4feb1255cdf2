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

export function toFieldErrors(errors: ErrorObject[] | null | undefined, prefix = ''): FieldError[] {
  return (errors ?? []).map((e) => {
    let path = prefix + e.instancePath;
    if (e.keyword === 'required') path += `/${(e.params as { missingProperty: string }).missingProperty}`;
    if (e.keyword === 'additionalProperties') path += `/${(e.params as { additionalProperty: string }).additionalProperty}`;
    const message = e.keyword === 'additionalProperties' ? 'unknown field' : (e.message ?? 'invalid');
    return { path: path || '/', message };
  });
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
      const errors = toFieldErrors(fn.errors, `/${part}`);
      throw new InputError(`invalid ${kind} ${part}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, errors);
    }
  }
}
