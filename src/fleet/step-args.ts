// Typed reads of a node-level run's arguments, for the lab's steps and the real agent's alike:
// a missing or malformed argument is a clear error naming it, never a daemon started wrong.
export type Args = Record<string, unknown>;

export function optStr(args: Args, key: string): string | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v === '') throw new Error(`argument ${key} must be a non-empty string`);
  return v;
}

export function str(args: Args, key: string): string {
  const v = optStr(args, key);
  if (v === undefined) throw new Error(`argument ${key} is required`);
  return v;
}

export function optInt(args: Args, key: string): number | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new Error(`argument ${key} must be a non-negative integer`);
  return v;
}

export function int(args: Args, key: string): number {
  const v = optInt(args, key);
  if (v === undefined) throw new Error(`argument ${key} is required`);
  return v;
}
