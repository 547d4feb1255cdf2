// Waiting for a condition, the one way tests (and the benches that drive real processes) wait:
// poll until it holds; the bound is a safety net, never the thing asserted.

/** Polls until the check passes (40 s by default: a loaded 2-core machine took longer than 15 s
 * to bring four lab nodes up). `what` may be a function, asked when the wait gives up: it can
 * say what was last seen. */
export async function waitFor<T>(
  what: string | (() => string),
  check: () => Promise<T | undefined | false> | T | undefined | false,
  boundMs = 40_000,
): Promise<T> {
  const until = Date.now() + boundMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > until) throw new Error(`gave up waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
