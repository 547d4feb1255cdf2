// What an operator declares about filesystems and RGW users, through the API or a specs file:
// one schema and one set of rules for both.
import { InputError, type FieldError } from '../errors.js';
import { POOL_NAME_PATTERN, RGW_USER_ID_PATTERN, type FilesystemSpec } from './storage-kinds.js';

const PG_RULE = 'a power of two from 1 to 4096';
const poolName = (what: string): Record<string, unknown> => ({
  type: 'string',
  pattern: POOL_NAME_PATTERN,
  description: `${what}: letters, digits and . _ -, starting with a letter or digit, up to 63 characters`,
});
// The power-of-two rule is checked by filesystemErrors, so the error can say it in words.
const pg = (dflt: number): Record<string, unknown> => ({ type: 'integer', default: dflt, description: `placement groups: ${PG_RULE}` });

export const filesystemInputSchema: Record<string, unknown> = {
  type: 'object',
  required: ['name', 'metadataPool', 'dataPool'],
  additionalProperties: false,
  properties: {
    name: poolName('filesystem name'),
    metadataPool: poolName('metadata pool name'),
    metadataPG: pg(16),
    dataPool: poolName('data pool name'),
    dataPG: pg(32),
  },
};

const isPowerOfTwo = (n: number): boolean => Number.isInteger(n) && n >= 1 && n <= 4096 && (n & (n - 1)) === 0;

/** The rules a schema cannot say well; paths under `at` (/body for the API, /spec for a file). */
export function filesystemErrors(b: FilesystemSpec, at = '/body'): FieldError[] {
  const errors = (['metadataPG', 'dataPG'] as const)
    .filter((k) => !isPowerOfTwo(b[k]))
    .map((k) => ({ path: `${at}/${k}`, message: `must be ${PG_RULE}` }));
  if (b.metadataPool === b.dataPool) errors.push({ path: `${at}/dataPool`, message: 'must differ from metadataPool' });
  return errors;
}

export function checkFilesystem(b: FilesystemSpec, at = '/body'): void {
  const errors = filesystemErrors(b, at);
  if (errors.length) throw new InputError(`invalid request: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, errors);
}

/** Pools another filesystem uses already; null when none. */
export function poolClash(spec: FilesystemSpec, others: ReadonlyArray<{ spec: FilesystemSpec }>): string | null {
  const clash = others.find(
    (f) => f.spec.name !== spec.name && [f.spec.metadataPool, f.spec.dataPool].some((p) => p === spec.metadataPool || p === spec.dataPool),
  );
  if (!clash) return null;
  return `filesystem ${clash.spec.name} already uses pool ${[spec.metadataPool, spec.dataPool].find((p) => p === clash.spec.metadataPool || p === clash.spec.dataPool)}`;
}

export const rgwUserInputSchema: Record<string, unknown> = {
  type: 'object',
  required: ['userId', 'displayName'],
  additionalProperties: false,
  properties: {
    userId: {
      type: 'string',
      pattern: RGW_USER_ID_PATTERN,
      description: 'lower-case letters, digits, _ and -, starting with a letter or digit, up to 63',
    },
    displayName: { type: 'string', minLength: 1, maxLength: 256 },
    email: { type: 'string', format: 'email', maxLength: 254 },
  },
};
