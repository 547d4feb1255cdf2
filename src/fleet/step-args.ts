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

/** The first monmap's monitors a bootstrap run names (name and IP each); undefined if absent. */
export function optMonList(args: Args, key: string): Array<{ name: string; addr: string }> | undefined {
  const v = args[key];
  if (v === undefined || v === null) return undefined;
  const ok = (m: unknown): m is { name: string; addr: string } =>
    typeof m === 'object' && m !== null && typeof (m as { name?: unknown }).name === 'string' && (m as { name: string }).name !== ''
    && typeof (m as { addr?: unknown }).addr === 'string' && (m as { addr: string }).addr !== '';
  if (!Array.isArray(v) || v.length === 0 || !v.every(ok)) throw new Error(`argument ${key} must be a non-empty list of { name, addr }`);
  return v.map((m) => ({ name: m.name, addr: m.addr }));
}
