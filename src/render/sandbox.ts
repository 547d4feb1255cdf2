// Renders templates in a worker thread with a deadline. One render at a time runs there; a
// render past its deadline gets its thread terminated (the only way to stop synchronous code)
// and a fresh thread takes the rest of the queue. The deadline starts when the render starts in
// a thread that is ready, not while it waits in the queue or for a new thread to load.
import { Worker } from 'node:worker_threads';
import { QuarryError } from '../errors.js';
import type { RenderReply, RenderRequest } from './render-worker.js';

export class TemplateRenderError extends QuarryError {
  constructor(message: string, code = 'TEMPLATE_FAILED') {
    super(message, 422, code);
  }
}

export interface SandboxOptions {
  timeoutMs: number;
}

interface Job {
  req: RenderRequest;
  resolve: (text: string) => void;
  reject: (err: Error) => void;
}

const WORKER_URL = new URL('./render-worker.js', import.meta.url);

export class TemplateSandbox {
  private worker: Worker | null = null;
  private workerReady = false;
  private readonly queue: Job[] = [];
  private current: { job: Job; timer: NodeJS.Timeout | null } | null = null;
  private nextId = 1;
  private closed = false;

  constructor(private readonly opts: SandboxOptions) {}

  render(name: string, version: number, source: string, context: Record<string, unknown>): Promise<string> {
    if (this.closed) return Promise.reject(new Error('the template sandbox is closed'));
    return new Promise<string>((resolve, reject) => {
      this.queue.push({ req: { id: this.nextId++, key: `${name}@${version}`, name, source, context }, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the template sandbox is closed'));
    if (this.current) this.finish(new Error('the template sandbox is closed'));
    await this.worker?.terminate();
    this.worker = null;
  }

  private pump(): void {
    if (this.current || this.closed) return;
    const job = this.queue.shift();
    if (!job) return;
    const worker = this.ensureWorker();
    this.current = { job, timer: this.workerReady ? this.deadline() : null };
    worker.postMessage(job.req);
  }

  private deadline(): NodeJS.Timeout {
    return setTimeout(() => this.timedOut(), this.opts.timeoutMs);
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(WORKER_URL);
    this.workerReady = false;
    w.unref(); // an idle sandbox never keeps the process alive
    w.on('message', (reply: RenderReply) => this.worker === w && this.replied(reply));
    w.on('error', (err) => this.lost(w, err));
    w.on('exit', () => this.lost(w, new Error('the template thread stopped')));
    this.worker = w;
    return w;
  }

  private replied(reply: RenderReply): void {
    const cur = this.current;
    if ('ready' in reply) {
      this.workerReady = true;
      if (cur && !cur.timer) cur.timer = this.deadline();
      return;
    }
    if (!cur || cur.job.req.id !== reply.id) return;
    if ('text' in reply) this.finish(null, reply.text);
    else {
      const at = reply.line === null ? '' : ` (line ${reply.line})`;
      this.finish(new TemplateRenderError(`template ${cur.job.req.name} failed to render${at}: ${reply.error}`));
    }
  }

  private timedOut(): void {
    const cur = this.current;
    if (!cur) return;
    const w = this.worker;
    this.worker = null;
    void w?.terminate();
    this.finish(new TemplateRenderError(`template ${cur.job.req.name} did not finish rendering within ${this.opts.timeoutMs} ms and was stopped`, 'TEMPLATE_TIMEOUT'));
  }

  private lost(w: Worker, err: Error): void {
    if (this.worker !== w) return; // a terminated thread, already replaced
    this.worker = null;
    if (this.current) this.finish(new TemplateRenderError(`template ${this.current.job.req.name} failed to render: ${err.message}`));
  }

  private finish(err: Error | null, text = ''): void {
    const cur = this.current;
    if (!cur) return;
    if (cur.timer) clearTimeout(cur.timer);
    this.current = null;
    if (err) cur.job.reject(err);
    else cur.job.resolve(text);
    this.pump();
  }
}
