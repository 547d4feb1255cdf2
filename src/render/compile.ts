// Checks a template source before it is accepted: ejs's own compile error names no line, so
// the generated JavaScript is parsed here (never run) and the error is mapped back to the
// template line through the `__line = N` markers ejs writes before each piece.
import vm from 'node:vm';
import ejs from 'ejs';
import { InputError } from '../errors.js';

export class TemplateCompileError extends InputError {
  constructor(
    readonly templateName: string,
    readonly line: number,
    reason: string,
  ) {
    super(`template ${templateName} does not compile: line ${line}: ${reason}`, [{ path: `/body/line/${line}`, message: reason }], 'TEMPLATE_INVALID');
  }
}

const lineOf = (text: string, index: number): number => text.slice(0, Math.max(0, index)).split('\n').length;

/** The template line of the first unclosed `<%` tag. */
function unclosedTagLine(source: string): number {
  let at = 0;
  let open = -1;
  for (;;) {
    const start = source.indexOf('<%', at);
    if (start < 0) break;
    if (source[start + 2] === '%') {
      at = start + 3; // `<%%` is a literal `<%`
      continue;
    }
    const end = source.indexOf('%>', start + 2);
    if (end < 0) {
      open = start;
      break;
    }
    at = end + 2;
  }
  return open < 0 ? 1 : lineOf(source, open);
}

function generated(source: string): string {
  // generateSource and source are ejs's own (untyped) steps before compile.
  const t = new ejs.Template(source, { compileDebug: true }) as unknown as { generateSource(): void; source: string };
  t.generateSource();
  return t.source;
}

/** The template line a line of the generated function body came from. */
function templateLine(body: string, generatedLine: number): number {
  const lines = body.split('\n').slice(0, generatedLine);
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /__line = (\d+)/.exec(lines[i] ?? '');
    if (m) return Number(m[1]);
  }
  return 1;
}

/** Throws TemplateCompileError with the template line when the source does not compile. */
export function checkTemplate(name: string, source: string): void {
  let body: string;
  try {
    body = generated(source);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new TemplateCompileError(name, unclosedTagLine(source), reason);
  }
  try {
    // The first line is the wrapper's, so generated line N + 1 is body line N.
    new vm.Script(`(function (locals, escapeFn, include, rethrow) { with (locals || {}) {\n${body}\n} })`, { filename: 'template' });
  } catch (err) {
    const m = /template:(\d+)/.exec((err as Error).stack ?? '');
    const line = m ? templateLine(body, Number(m[1]) - 1) : 1;
    throw new TemplateCompileError(name, line, err instanceof Error ? err.message : String(err));
  }
}

export interface TemplateHeader {
  description: string;
  path: string;
  postHook: string;
}

/** A shipped file may start with ejs comments `<%# key: value -%>` for description, path and
 * postHook; they render to nothing. */
export function templateHeader(source: string): TemplateHeader {
  const out: TemplateHeader = { description: '', path: '', postHook: '' };
  for (const m of source.matchAll(/^<%#\s*(description|path|postHook):[ \t]*(.*?)\s*-?%>\r?$/gm)) {
    out[m[1] as keyof TemplateHeader] = m[2] ?? '';
  }
  return out;
}
