// Turning a command's stdout into a checked value: JSON.parse, then an ajv schema that lists
// only the fields Quarry reads (extra fields are fine: Ceph adds some in every release).
// Errors name the command and the field, and never quote the output: it may hold a key.
import type { Ajv, ValidateFunction } from 'ajv';
import { QuarryError, type FieldError } from '../errors.js';
import { createAjv, toFieldErrors } from '../model/validate.js';

/** A command succeeded but said something Quarry cannot read: not JSON, or a field is
 * missing or has the wrong type (a Ceph upgrade changed the format, or the wrong binary ran). */
export class CommandOutputError extends QuarryError {
  readonly command: string;
  readonly errors: FieldError[];
  constructor(command: string, detail: string, errors: FieldError[] = []) {
    super(`${command}: unexpected output: ${detail}`, 500, 'COMMAND_OUTPUT_INVALID');
    this.command = command;
    this.errors = errors;
  }
}

export type Schema = Record<string, unknown>;

// Schema shorthands; `obj` makes every listed property required except those in `optional`.
export const int = { type: 'integer' } as const;
export const num = { type: 'number' } as const;
export const str = { type: 'string' } as const;
export const bool = { type: 'boolean' } as const;
export const arr = (items: Schema): Schema => ({ type: 'array', items });
export const obj = (properties: Record<string, Schema>, optional: string[] = []): Schema => ({
  type: 'object',
  properties,
  required: Object.keys(properties).filter((k) => !optional.includes(k)),
});
/** An object whose keys are data (daemon names, versions), each value of one schema. */
export const mapOf = (values: Schema): Schema => ({ type: 'object', additionalProperties: values });

/** A schema together with the TypeScript type of what it accepts. */
export interface Shape<T> {
  readonly name: string;
  readonly schema: Schema;
  /** Phantom: carries T for the compiler only. */
  readonly _type?: T;
}
export const shape = <T>(name: string, schema: Schema): Shape<T> => ({ name, schema });

/** Compiles each schema the first time it is used, once per instance. */
export class OutputParser {
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly ajv: Ajv = createAjv()) {}

  /** Parses `stdout` as JSON and checks it against `s`; `command` is how errors name it. */
  parse<T>(command: string, stdout: string, s: Shape<T>): T {
    const value = parseJson(command, stdout);
    const validate = this.validator(s);
    if (!validate(value)) {
      const errors = toFieldErrors(validate.errors);
      throw new CommandOutputError(command, errors.map((e) => `${e.path} ${e.message}`).join('; '), errors);
    }
    return value as T;
  }

  private validator(s: Shape<unknown>): ValidateFunction {
    let fn = this.compiled.get(s.name);
    if (!fn) {
      fn = this.ajv.compile(s.schema);
      this.compiled.set(s.name, fn);
    }
    return fn;
  }
}

function parseJson(command: string, stdout: string): unknown {
  if (stdout.trim() === '') throw new CommandOutputError(command, 'empty output, expected JSON');
  try {
    return JSON.parse(stdout) as unknown;
  } catch (err) {
    // V8's message quotes the text around the error; only its position is kept.
    const at = /position (\d+)/.exec(err instanceof Error ? err.message : '')?.[1];
    const where = at === undefined ? '' : ` at position ${at}`;
    throw new CommandOutputError(command, `not valid JSON${where} (${stdout.length} characters)`);
  }
}
