// Renders templates in a separate, powerless process (render-child.ts, started as
// child-process.ts says) with a deadline, one render at a time, from a bounded queue. The
// render process enforces the time limit itself (vm timeout) and answers; should it not, the
// sandbox kills it at the deadline plus a grace and starts a fresh one for the rest of the
// queue. The deadline starts when the render is handed to a process that is ready, not while
// it waits in the queue or for a new process to load. A render that finds the queue full is
// refused at once (503 TEMPLATE_BUSY) rather than waiting behind it.
import type { ChildProcess } from 'node:child_process';
import { TemplateCompileError } from './compile.js';
import { FunctionBodies } from './function-bodies.js';
import { findUnshare, spawnRenderChild, unshareArgs } from './child-process.js';
import { TEMPLATE_HELPERS } from './helpers.js';
import type { ChildReply, ChildRequest } from './render-child.js';

/** Every field any ChildReply has. */
type ChildReplyField = ChildReply extends infer R ? (R extends unknown ? keyof R : never) : never;
import { TemplateBusyError, TemplateRenderError, type SandboxLog, type TemplateRenderer } from './renderer.js';

export { TemplateBusyError, TemplateRenderError, type RenderLane, type SandboxLog, type TemplateRenderer } from './renderer.js';

export interface SandboxOptions {
  timeoutMs: number;
  /** The render process's heap (--max-old-space-size). */
  memoryMb?: number;
  /** Renders waiting (not counting the one running) past which a render is refused. */
  maxQueued?: number;
  /** Characters a render may produce. */
  maxOutput?: number;
  /** ES modules without imports whose exports templates see as globals (template-realm.ts). */
  helpers?: URL[];
  /** Run the render process in an empty network namespace (`unshare --net`) when the host can. */
  isolateNetwork?: boolean;
  /** Where `unshare` is (tests); found on PATH and in the usual places otherwise. */
  unsharePath?: string;
  /** Stop the render process after this long without work (it restarts on the next render). */
  idleMs?: number;
  /** Names this sandbox in messages and logs. */
  lane?: string;
  log?: SandboxLog;
}

interface Job {
  name: string;
  req: ChildRequest;
  resolve: (text: string) => void;
  reject: (err: Error) => void;
}

const GRACE_MS = 1_000;
const START_MS = 15_000;

export class TemplateSandbox implements TemplateRenderer {
  private child: ChildProcess | null = null;
  private childReady = false;
  private withUnshare: boolean;
  private readonly unsharePath: string | null;
  private readonly queue: Job[] = [];
  private current: { job: Job; timer: NodeJS.Timeout | null } | null = null;
  private readonly bodies = new FunctionBodies();
  private idleTimer: NodeJS.Timeout | null = null;
  private nextId = 1;
  private closed = false;
  private readonly memoryMb: number;
  private readonly maxQueued: number;
  private readonly maxOutput: number;

  constructor(private readonly opts: SandboxOptions) {
    this.memoryMb = opts.memoryMb ?? 64;
    this.maxQueued = opts.maxQueued ?? Infinity;
    this.maxOutput = opts.maxOutput ?? 4 * 1024 * 1024;
    this.unsharePath = opts.isolateNetwork === false ? null : (opts.unsharePath ?? findUnshare());
    this.withUnshare = this.unsharePath !== null;
    if (opts.isolateNetwork !== false && !this.unsharePath) this.warnNoNetns('util-linux unshare was not found');
  }

  /** What waits and runs now, and the render process (tests, diagnostics). */
  stats(): { running: string | null; queued: number; pid: number | null; networkIsolated: boolean } {
    return {
      running: this.current?.job.name ?? null,
      queued: this.queue.length,
      pid: this.child?.pid ?? null,
      networkIsolated: this.withUnshare,
    };
  }

  render(name: string, version: number, source: string, context: Record<string, unknown>): Promise<string> {
    if (this.closed) return Promise.reject(new Error('the template sandbox is closed'));
    if (this.queue.length >= this.maxQueued) {
      return Promise.reject(
        new TemplateBusyError(
          `${this.queue.length} template renders${this.opts.lane ? ` of the ${this.opts.lane} lane` : ''} are waiting already; ask again shortly`,
        ),
      );
    }
    let compiled: { key: string; body: string };
    let json: string;
    try {
      compiled = this.bodies.get(name, version, source);
      json = contextJson(context);
    } catch (err) {
      const e = err as Error;
      const at = err instanceof TemplateCompileError ? ` (line ${err.line})` : '';
      const reason = err instanceof TemplateCompileError ? (err.errors[0]?.message ?? e.message) : e.message;
      return Promise.reject(new TemplateRenderError(`template ${name} failed to render${at}: ${reason}`));
    }
    return new Promise<string>((resolve, reject) => {
      const req: ChildRequest = { id: this.nextId++, ...compiled, json, timeoutMs: this.opts.timeoutMs, maxOutput: this.maxOutput };
      this.queue.push({ name, req, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    for (const job of this.queue.splice(0)) job.reject(new Error('the template sandbox is closed'));
    if (this.current) this.finish(new Error('the template sandbox is closed'));
    this.stop();
  }

  private pump(): void {
    if (this.current || this.closed) return;
    const job = this.queue.shift();
    if (!job) return;
    const child = this.ensureChild();
    hold(child, true);
    this.current = { job, timer: this.childReady ? this.deadline() : null };
    child.stdin?.write(`${JSON.stringify(job.req)}\n`);
  }

  private deadline(): NodeJS.Timeout {
    return setTimeout(() => this.timedOut(), this.opts.timeoutMs + GRACE_MS);
  }

  private ensureChild(): ChildProcess {
    if (this.child) return this.child;
    const child = spawnRenderChild(
      { memoryMb: this.memoryMb, helpers: this.opts.helpers ?? TEMPLATE_HELPERS, unshare: this.withUnshare ? unshareArgs() : null },
      this.unsharePath,
    );
    this.child = child;
    this.childReady = false;
    const usedUnshare = this.withUnshare;
    // A process that never says it is ready must not hold the queue forever.
    const starting = setTimeout(() => !this.childReady && this.lost(child, `did not start within ${START_MS} ms`), START_MS);
    starting.unref();
    child.once('close', () => clearTimeout(starting));
    let stderr = '';
    let pending = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      if (this.child !== child) return;
      pending += chunk;
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        this.replied(child, line);
        if (this.child !== child) return;
      }
      // JSON escapes at most 6 characters for one: more than that is not a reply of ours.
      if (pending.length > this.maxOutput * 6 + 65_536) this.lost(child, 'answered more than a render may produce');
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4_096);
    });
    child.stdin?.on('error', () => {}); // the process died: its exit says so
    child.on('error', (err) => this.lost(child, `could not be started: ${err.message}`));
    child.on('close', (code, signal) => {
      if (this.child !== child) return;
      if (!this.childReady && usedUnshare && code !== 0 && /unshare/.test(stderr)) {
        // This host cannot make a network namespace for it: run it without, and say so once.
        this.withUnshare = false;
        this.warnNoNetns(stderr.trim().split('\n').pop() ?? 'unshare failed');
        this.child = null;
        if (this.current) {
          if (this.current.timer) clearTimeout(this.current.timer);
          this.queue.unshift(this.current.job);
          this.current = null;
        }
        this.pump();
        return;
      }
      const oom = /heap out of memory|Reached heap limit/i.test(stderr);
      this.lost(
        child,
        oom ? `the render ran out of memory (limit ${this.memoryMb} MB)` : `the render process stopped (${signal ?? `exit code ${code}`})`,
      );
    });
    return child;
  }

  private replied(child: ChildProcess, line: string): void {
    // Checked field by field, not trusted to be a ChildReply: template code runs in that process.
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      this.lost(child, 'answered something that is not a reply');
      return;
    }
    const cur = this.current;
    if (typeof parsed !== 'object' || parsed === null) return;
    const reply = parsed as { [F in ChildReplyField]?: unknown };
    if ('ready' in reply) {
      this.childReady = true;
      if (cur && !cur.timer) cur.timer = this.deadline();
      return;
    }
    if (!cur || reply.id !== cur.job.req.id) return;
    if (typeof reply.text === 'string') this.finish(null, reply.text);
    else if ('error' in reply && reply.code === 'TEMPLATE_TIMEOUT') this.finish(this.timeoutError(cur.job.name));
    else {
      const at = typeof reply.line === 'number' ? ` (line ${reply.line})` : '';
      const why = typeof reply.error === 'string' ? reply.error : reply.error == null ? 'no reason given' : JSON.stringify(reply.error);
      this.finish(new TemplateRenderError(`template ${cur.job.name} failed to render${at}: ${why}`));
    }
  }

  private timeoutError(name: string): TemplateRenderError {
    return new TemplateRenderError(
      `template ${name} did not finish rendering within ${this.opts.timeoutMs} ms and was stopped`,
      'TEMPLATE_TIMEOUT',
    );
  }

  private timedOut(): void {
    const cur = this.current;
    if (!cur) return;
    this.stop();
    this.finish(this.timeoutError(cur.job.name));
  }

  private lost(child: ChildProcess, why: string): void {
    if (this.child !== child) return; // a stopped process, already replaced
    this.stop();
    if (this.current) this.finish(new TemplateRenderError(`template ${this.current.job.name} failed to render: ${why}`));
  }

  private stop(): void {
    const child = this.child;
    this.child = null;
    this.childReady = false;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }

  private finish(err: Error | null, text = ''): void {
    const cur = this.current;
    if (!cur) return;
    if (cur.timer) clearTimeout(cur.timer);
    this.current = null;
    if (err) cur.job.reject(err);
    else cur.job.resolve(text);
    this.pump();
    if (!this.busy() && this.child) {
      hold(this.child, false);
      this.idle();
    }
  }

  // A method, not `this.current` read inline: after `this.current = null; this.pump()`,
  // TypeScript still narrows the field to null, though pump() may have set it.
  private busy(): boolean {
    return this.current !== null;
  }

  private idle(): void {
    if (this.opts.idleMs === undefined) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (!this.current && this.queue.length === 0) this.stop();
    }, this.opts.idleMs);
    this.idleTimer.unref();
  }

  private warnNoNetns(reason: string): void {
    this.opts.log?.('warn', 'templates render without a network namespace of their own: the render process can reach the network', {
      lane: this.opts.lane,
      reason,
    });
  }
}

/** A render in flight keeps the master's event loop alive; an idle render process never does. */
function hold(child: ChildProcess, on: boolean): void {
  for (const h of [child, child.stdin, child.stdout, child.stderr] as Array<{ ref?: () => void; unref?: () => void } | null>) {
    if (on) h?.ref?.();
    else h?.unref?.();
  }
}

/** The context as JSON, keeping which top-level names are there but undefined: a template may
 * test `agent` for a node that has none, where a missing name would be a ReferenceError. */
function contextJson(context: Record<string, unknown>): string {
  return JSON.stringify({ data: context, undef: Object.keys(context).filter((k) => context[k] === undefined) });
}
