// Where a template's code runs, inside the render process (render-child.ts): a fresh `vm`
// context per render whose global object has a null prototype and whose only own globals are
// the JavaScript built-ins of that context and the helper modules' exports. The render context
// is built in there by that context's own JSON.parse from a string, and ejs's escape, include
// and rethrow are functions of that context too: nothing of the process's own realm is
// reachable from template code, so `this.constructor.constructor`, an error's constructor or a
// stack frame lead to that context's Function, which cannot compile strings (codeGeneration
// off). A fresh context per render means no render sees what an earlier one left behind (a
// template cannot collect other nodes' install secrets). The next context is prepared while
// the process is idle, so a render pays only for running its compiled function.
import vm from 'node:vm';

export interface RealmRender {
  key: string;
  /** The function body templateFunctionBody made (compile.ts): ejs's own output. */
  body: string;
  /** { data: the render context, undef: its top-level names whose value is undefined } as
   * JSON: parsed inside the template's context. */
  json: string;
  timeoutMs: number;
  maxOutput: number;
}

export type RealmResult = { text: string } | { error: string; line: number | null; code: 'TEMPLATE_FAILED' | 'TEMPLATE_TIMEOUT' };

/** Runs first in every context: ejs's helpers and the render entry point, all of that context. */
const BOOTSTRAP = `(function () {
  'use strict';
  var parse = JSON.parse, stringify = JSON.stringify, keys = Object.keys, create = Object.create, G = globalThis;
  var RULES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' };
  var MATCH = /[&<>'"]/g;
  var encode = function (c) { return RULES[c] || c; };
  function escapeFn(markup) { return markup == undefined ? '' : String(markup).replace(MATCH, encode); }
  function include() { throw new Error('include() is not available in Quarry templates'); }
  var line = null;
  function rethrow(err, lines, filename, lineno) { line = lineno; throw err; }
  function message(e) {
    try { return e !== null && typeof e === 'object' && 'message' in e ? String(e.message) : String(e); }
    catch (x) { return 'the template threw a value that cannot be shown'; }
  }
  return function prepare(fn, json) {
    // A null-prototype copy, as ejs makes: with() must not find Object.prototype's names.
    var parsed = parse(json), data = parsed.data, locals = create(null), ks = keys(data), i;
    for (i = 0; i < ks.length; i++) locals[ks[i]] = data[ks[i]];
    for (i = 0; i < parsed.undef.length; i++) locals[parsed.undef[i]] = undefined;
    G.__quarryRender = function () {
      try {
        var out = fn.call(undefined, locals, escapeFn, include, rethrow);
        return typeof out === 'string' ? 'T' + out : 'E' + stringify({ error: 'the template did not produce text', line: null });
      } catch (e) {
        return 'E' + stringify({ error: message(e), line: line });
      }
    };
  };
})()`;

const MAX_CACHED = 64;

export class TemplateRealm {
  private readonly bootstrap = new vm.Script(BOOTSTRAP, { filename: 'quarry-template-bootstrap' });
  private readonly run = new vm.Script('__quarryRender()', { filename: 'quarry-template-run' });
  private readonly compiled = new Map<string, vm.Script>();
  private spare: Promise<Prepared> | null = null;

  /** helpers: ES module sources without imports; their exports become template globals. */
  constructor(private readonly helpers: string[]) {}

  /** Gets the next context ready while nothing waits. */
  warm(): void {
    this.spare ??= this.prepare();
    this.spare.catch(() => {}); // surfaces at the next render
  }

  async render(req: RealmRender): Promise<RealmResult> {
    const ready = this.spare ?? this.prepare();
    this.spare = null;
    const { context, prepare } = await ready;
    let fn: unknown;
    try {
      fn = this.script(req.key, req.body).runInContext(context);
    } catch (err) {
      return { error: `does not compile: ${(err as Error).message}`, line: null, code: 'TEMPLATE_FAILED' };
    }
    prepare(fn, req.json);
    let out: unknown;
    try {
      out = this.run.runInContext(context, { timeout: req.timeoutMs });
    } catch (err) {
      const timedOut = (err as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
      return timedOut
        ? { error: `did not finish within ${req.timeoutMs} ms`, line: null, code: 'TEMPLATE_TIMEOUT' }
        : { error: 'the render stopped', line: null, code: 'TEMPLATE_FAILED' };
    }
    // Only a primitive string crosses back; anything else is the template's doing.
    if (typeof out !== 'string') return { error: 'the template did not produce text', line: null, code: 'TEMPLATE_FAILED' };
    if (out.startsWith('T')) {
      return out.length - 1 > req.maxOutput
        ? { error: `its output is larger than ${req.maxOutput} characters`, line: null, code: 'TEMPLATE_FAILED' }
        : { text: out.slice(1) };
    }
    const failed = JSON.parse(out.slice(1)) as { error?: unknown; line?: unknown };
    return {
      error: typeof failed.error === 'string' ? failed.error.slice(0, 500) : 'the render failed',
      line: typeof failed.line === 'number' && Number.isInteger(failed.line) ? failed.line : null,
      code: 'TEMPLATE_FAILED',
    };
  }

  private script(key: string, body: string): vm.Script {
    let s = this.compiled.get(key);
    if (!s) {
      s = new vm.Script(`(function (locals, escapeFn, include, rethrow) {\n${body}\n})`, {
        filename: 'template',
        // A string, not an Error: a rejection from this realm would hand template code a
        // constructor chain to the process. compile.ts refuses `import` anyway.
        importModuleDynamically: (() => {
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- a string on purpose, as said above
          throw 'import() is not available in Quarry templates';
        }) as never,
      });
      if (this.compiled.size >= MAX_CACHED) this.compiled.delete(this.compiled.keys().next().value as string);
      this.compiled.set(key, s);
    }
    return s;
  }

  private async prepare(): Promise<Prepared> {
    const globals = Object.create(null) as Record<string, unknown>;
    // microtaskMode: a promise job a template queues runs within its own render's time limit
    // (after the run script), never later in this process's queue.
    const context = vm.createContext(globals, {
      name: 'template',
      codeGeneration: { strings: false, wasm: false },
      microtaskMode: 'afterEvaluate',
    });
    const prepare = this.bootstrap.runInContext(context) as Prepared['prepare'];
    for (const source of this.helpers) {
      const mod = new vm.SourceTextModule(source, { context, identifier: 'quarry-template-helper' });
      await mod.link(() => {
        throw new Error('a template helper module may not import anything');
      });
      // Evaluation is synchronous for a module without top-level await; its promise would
      // settle only in the context's own (afterEvaluate) microtask queue.
      void mod.evaluate();
      if (mod.status !== 'evaluated') throw new Error(`a template helper module did not evaluate (${mod.status})`);
      for (const [name, value] of Object.entries(mod.namespace)) globals[name] = value;
    }
    return { context, prepare };
  }
}

interface Prepared {
  context: vm.Context;
  prepare: (fn: unknown, json: string) => void;
}
