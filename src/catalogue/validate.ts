// Checks a run's arguments against its step's schema, compiled once per step. The agent and
// the lab's agents refuse a malformed run before acting (the master does not check: a loop's bad
// run fails at once, naming the argument). The
// message names the argument (never its value, which may be long or secret; an unknown daemon
// type is the one value quoted, as the agent always did).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { STEPS, type StepArgs, type StepName } from './steps.js';

// ajv-formats ships CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

let ajv: Ajv | undefined;
const compiled = new Map<StepName, ValidateFunction>();

function validatorOf(name: StepName): ValidateFunction {
  let fn = compiled.get(name);
  if (!fn) {
    ajv ??= addFormats(new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, verbose: true }));
    fn = ajv.compile(STEPS[name].args);
    compiled.set(name, fn);
  }
  return fn;
}

/** A run's arguments do not match its step's schema. */
export class StepArgsError extends Error {
  constructor(
    readonly step: StepName,
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'StepArgsError';
  }
}

const top = (e: ErrorObject): string => e.instancePath.split('/')[1] ?? '';

function describe(step: StepName, e: ErrorObject): { field: string; message: string } {
  if (e.keyword === 'required' && e.instancePath === '') {
    const field = (e.params as { missingProperty: string }).missingProperty;
    return { field, message: `argument ${field} is required` };
  }
  if (e.keyword === 'additionalProperties' && e.instancePath === '') {
    const field = (e.params as { additionalProperty: string }).additionalProperty.slice(0, 64);
    return { field, message: `argument ${field} is not taken by ${step}` };
  }
  const field = top(e);
  const schema = ((STEPS[step].args as { properties?: Record<string, { description?: string }> }).properties ?? {})[field];
  if (e.keyword === 'enum' && e.instancePath === `/${field}` && typeof e.data === 'string' && e.data.length <= 64) {
    return { field, message: `unknown ${schema?.description ?? field} '${e.data}'` };
  }
  if (!field) return { field: '/', message: `the arguments of ${step} must be an object` };
  return {
    field,
    message: `argument ${field} must be ${schema?.description ?? 'valid'}${e.instancePath !== `/${field}` ? ` (${e.instancePath.slice(field.length + 2)} ${e.message ?? 'is invalid'})` : ''}`,
  };
}

/** The first problem of a run's arguments, or null when they match the step's schema. */
export function stepArgsProblem(step: StepName, args: unknown): StepArgsError | null {
  const fn = validatorOf(step);
  if (fn(args)) return null;
  const errors = fn.errors ?? [];
  const first = errors[0];
  if (!first) return new StepArgsError(step, '/', `the arguments of ${step} are invalid`);
  const { field, message } = describe(step, first);
  return new StepArgsError(step, field, message);
}

/** Throws a StepArgsError naming the first bad argument. */
export function assertStepArgs(step: StepName, args: unknown): void {
  const problem = stepArgsProblem(step, args);
  if (problem) throw problem;
}

/** The arguments, typed, or a StepArgsError naming the first bad one. */
export function checkStepArgs<K extends StepName>(step: K, args: unknown): StepArgs<K> {
  const problem = stepArgsProblem(step, args);
  if (problem) throw problem;
  return args as StepArgs<K>;
}
