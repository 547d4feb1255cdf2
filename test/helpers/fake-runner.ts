// A Runner for tests: every command must be scripted, anything else is refused (rook's
// MockExecutor). Deadlines and aborts behave like the real runner's, so code that depends on
// them can be tested without processes.
import { CommandError } from '../../src/errors.js';
import { secretMasker } from '../../src/exec/lines.js';
import { displayCommand, isSecret, type Arg, type RunOptions, type RunOutput, type Runner } from '../../src/exec/runner.js';

export interface FakeReply {
  stdout?: string;
  stderr?: string;
  exitCode?: number;
  /** The command "runs" this long; a deadline or an abort in between kills it. */
  delayMs?: number;
}

/** Matches a call; args are given as plain strings (a SecretArg as its value). */
export type CallMatcher = (cmd: string, args: string[]) => boolean;

export interface FakeCall {
  cmd: string;
  args: Arg[];
  /** The command line as a log would show it (secrets masked). */
  shown: string;
  input: string | undefined;
  opts: RunOptions;
}

/** A fixed reply, or one computed from the call. */
export type Reply = FakeReply | ((call: FakeCall) => FakeReply);

interface Expectation {
  description: string;
  matches: CallMatcher;
  reply: Reply;
  /** How many more calls it answers; Infinity for `always`. */
  remaining: number;
}

export class FakeRunner implements Runner {
  readonly calls: FakeCall[] = [];
  /** Calls nothing was scripted for; each one was also rejected. */
  readonly unexpected: FakeCall[] = [];
  private readonly expectations: Expectation[] = [];

  /** Scripts one call: `expect('ceph', ['osd', 'tree'], { stdout })`, or `expect(matcher, reply)`. */
  expect(cmd: string, args?: Arg[], reply?: Reply): this;
  expect(matcher: CallMatcher, reply?: Reply): this;
  expect(cmd: string | CallMatcher, argsOrReply?: Arg[] | Reply, reply?: Reply): this {
    this.expectations.push(toExpectation(cmd, argsOrReply, reply, 1));
    return this;
  }

  /** Like expect, but answers any number of calls. */
  always(cmd: string, args?: Arg[], reply?: Reply): this;
  always(matcher: CallMatcher, reply?: Reply): this;
  always(cmd: string | CallMatcher, argsOrReply?: Arg[] | Reply, reply?: Reply): this {
    this.expectations.push(toExpectation(cmd, argsOrReply, reply, Infinity));
    return this;
  }

  /** Scripted calls that were never made (always-expectations excluded). */
  pending(): string[] {
    return this.expectations.filter((e) => e.remaining > 0 && e.remaining !== Infinity).map((e) => e.description);
  }

  /** Throws when a scripted call was not made or an unscripted one was. */
  verify(): void {
    const problems = [...this.pending().map((d) => `not called: ${d}`), ...this.unexpected.map((c) => `unexpected: ${c.shown}`)];
    if (problems.length > 0) throw new Error(`FakeRunner: ${problems.join('; ')}`);
  }

  async run(cmd: string, args: Arg[], opts: RunOptions): Promise<RunOutput> {
    const call: FakeCall = { cmd, args, shown: displayCommand(cmd, args), input: opts.input?.toString(), opts };
    this.calls.push(call);
    const plain = args.map((a) => (isSecret(a) ? a.secret : a));
    const found = this.expectations.find((e) => e.remaining > 0 && e.matches(cmd, plain));
    if (!found) {
      this.unexpected.push(call);
      throw new Error(`FakeRunner: unexpected command: ${call.shown}`);
    }
    found.remaining -= 1;
    const reply = typeof found.reply === 'function' ? found.reply(call) : found.reply;
    await wait(reply.delayMs ?? 0, opts, call.shown);
    return answer(call, reply, secretMasker(args));
  }
}

function toExpectation(
  cmd: string | CallMatcher,
  argsOrReply: Arg[] | Reply | undefined,
  reply: Reply | undefined,
  times: number,
): Expectation {
  if (typeof cmd === 'function') {
    const r = Array.isArray(argsOrReply) ? reply : argsOrReply;
    return { description: 'matcher', matches: cmd, reply: r ?? {}, remaining: times };
  }
  const args = Array.isArray(argsOrReply) ? argsOrReply : [];
  const want = args.map((a) => (isSecret(a) ? a.secret : a));
  return {
    description: displayCommand(cmd, args),
    matches: (c, a) => c === cmd && a.length === want.length && a.every((x, i) => x === want[i]),
    reply: reply ?? {},
    remaining: times,
  };
}

/** Waits out the scripted delay unless the deadline or an abort comes first. */
function wait(delayMs: number, opts: RunOptions, shown: string): Promise<void> {
  if (opts.signal?.aborted) return Promise.reject(killed(shown, 'aborted'));
  if (delayMs <= 0 && opts.timeoutMs > 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const finish = (err?: CommandError): void => {
      clearTimeout(done);
      clearTimeout(deadline);
      opts.signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve();
    };
    const onAbort = (): void => finish(killed(shown, 'aborted'));
    const done = setTimeout(() => finish(), delayMs);
    const deadline = setTimeout(() => finish(killed(shown, `timed out after ${opts.timeoutMs} ms`)), opts.timeoutMs);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function killed(shown: string, why: string): CommandError {
  const err = new CommandError(shown, null, '', 'SIGTERM');
  err.message = `${shown} ${why} (killed by SIGTERM)`;
  return err;
}

function answer(call: FakeCall, reply: FakeReply, mask: (s: string) => string): RunOutput {
  const stdout = reply.stdout ?? '';
  const stderr = reply.stderr ?? '';
  const onLine = call.opts.onLine;
  if (onLine) {
    for (const line of splitLines(stdout)) onLine('stdout', mask(line));
    for (const line of splitLines(stderr)) onLine('stderr', mask(line));
  }
  const exitCode = reply.exitCode ?? 0;
  if (exitCode !== 0) throw new CommandError(call.shown, exitCode, mask(stderr));
  return { stdout, stderr, exitCode };
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
