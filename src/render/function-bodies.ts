// The master's half of compiling a template: ejs turns the source into a function body
// (compile.ts), once per name@version, and the render process compiles that body inside each
// template context. ejs never runs template code in the master.
import { TemplateCompileError, templateFunctionBody } from './compile.js';

const MAX = 256;

interface Entry {
  source: string;
  body: string | TemplateCompileError;
  /** What the render process caches its compiled script under. */
  key: string;
}

export class FunctionBodies {
  private readonly entries = new Map<string, Entry>();
  private made = 0;

  /** The body and its key; throws TemplateCompileError for a source that does not compile. */
  get(name: string, version: number, source: string): { key: string; body: string } {
    const key = `${name}@${version}`;
    let e = this.entries.get(key);
    // A stored version's source never changes; still, each body made gets a key never used
    // before, so the render process's cache cannot mix up two sources of one name@version.
    if (e === undefined || e.source !== source) {
      let body: string | TemplateCompileError;
      try {
        body = templateFunctionBody(name, source);
      } catch (err) {
        if (!(err instanceof TemplateCompileError)) throw err;
        body = err;
      }
      e = { source, body, key: `${key}#${++this.made}` };
      if (this.entries.size >= MAX) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(key, e);
    }
    if (e.body instanceof TemplateCompileError) throw e.body;
    return { key: e.key, body: e.body };
  }
}
