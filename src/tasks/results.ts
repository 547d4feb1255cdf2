// What a step leaves behind: a JSON object as its result, a one-line reason as its error.
import { InputError } from '../errors.js';

/** A plain JSON copy of a step's result; null for none. Throws InputError for anything a
 * run document cannot hold (an array, a cycle, a BigInt). */
export function jsonResult(value: unknown): Record<string, unknown> | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InputError('a run result must be an object', [{ path: '/result', message: 'must be an object' }]);
  }
  try {
    return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
  } catch (err) {
    const message = `a run result must be plain JSON: ${errorMessage(err)}`;
    throw new InputError(message, [{ path: '/result', message: 'must be plain JSON' }]);
  }
}

/** The message only: a run's error is shown to operators, a stack trace never is. */
export function errorMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : typeof err === 'string' ? err : 'unknown error';
  return text.trim() || (err instanceof Error ? err.name : 'unknown error');
}
