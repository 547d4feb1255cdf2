// Small test helpers for the runtime tests: a deferred promise and a macrotask tick.

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve: (value: T) => void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Lets pending promise chains and immediates run. */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function ticks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await tick();
}
