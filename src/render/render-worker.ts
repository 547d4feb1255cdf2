// The thread templates run in. ejs runs template code synchronously: here a template that
// loops forever stops only this thread, which the sandbox terminates at its deadline, and the
// master's event loop never waits on it. Compiled functions are kept per name@version.
import { parentPort } from 'node:worker_threads';
import ejs from 'ejs';
import { quote } from './quote.js';

export interface RenderRequest {
  id: number;
  /** name@version: a source never changes under one key. */
  key: string;
  name: string;
  source: string;
  context: Record<string, unknown>;
}

export type RenderReply = { id: number; text: string } | { id: number; error: string; line: number | null } | { ready: true };

const MAX_CACHED = 64;

/** include() would read any file of the master: a template is one stored source. */
const noInclude = (): never => {
  throw new Error('include() is not available in Quarry templates');
};
const compiled = new Map<string, ejs.TemplateFunction>();

function compile(req: RenderRequest): ejs.TemplateFunction {
  let fn = compiled.get(req.key);
  if (!fn) {
    fn = ejs.compile(req.source, { filename: req.name, compileDebug: true, async: false, includer: noInclude }) as ejs.TemplateFunction;
    if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value as string);
    compiled.set(req.key, fn);
  }
  return fn;
}

/** ejs rethrows as "name:LINE\n<source excerpt>\n\n<message>": keep the line and the message,
 * not the excerpt (the public endpoint must not show template source). */
function describe(err: unknown): { error: string; line: number | null } {
  const text = err instanceof Error ? err.message : String(err);
  const m = /^[^\n]*:(\d+)\n[\s\S]*?\n\n([\s\S]*)$/.exec(text);
  return m ? { error: (m[2] ?? '').trim(), line: Number(m[1]) } : { error: text, line: null };
}

parentPort?.on('message', (req: RenderRequest) => {
  let reply: RenderReply;
  try {
    // `q`: the quoting helpers (src/render/quote.ts); functions do not cross postMessage.
    reply = { id: req.id, text: compile(req)({ ...req.context, q: quote }) as string };
  } catch (err) {
    reply = { id: req.id, ...describe(err) };
  }
  parentPort?.postMessage(reply);
});
// Said once the imports are done: the sandbox starts a render's deadline from here, so a new
// thread's start-up on a busy machine is not charged to the template.
parentPort?.postMessage({ ready: true } satisfies RenderReply);
