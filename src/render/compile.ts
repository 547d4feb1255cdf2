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
    super(
      `template ${templateName} does not compile: line ${line}: ${reason}`,
      [{ path: `/body/line/${line}`, message: reason }],
      'TEMPLATE_INVALID',
    );
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

// generateSource, parseTemplateText and source are ejs's own (untyped) steps before compile.
type EjsTemplate = { generateSource(): void; parseTemplateText(): string[]; source: string };

function generated(source: string): string {
  const t = new ejs.Template(source, { compileDebug: true }) as unknown as EjsTemplate;
  t.generateSource();
  return t.source;
}

const CODE_OPEN = new Set(['<%', '<%_', '<%=', '<%-']);
const CLOSE = new Set(['%>', '-%>', '_%>']);

/** The first line whose code (not text, not a comment) names `import`: import() is the one way
 * template code can ask the runtime for a module, and its failure would come back as an error
 * object of the render process's own realm, not the template's. Refused outright instead. */
function importLine(source: string): number | null {
  const tokens = (new ejs.Template(source, {}) as unknown as EjsTemplate).parseTemplateText();
  let code = false;
  let line = 1;
  for (const tok of tokens) {
    if (CODE_OPEN.has(tok)) code = true;
    else if (CLOSE.has(tok) || tok === '<%#' || tok === '<%%') code = false;
    else if (code && /\bimport\b/.test(tok)) return line + tok.slice(0, tok.search(/\bimport\b/)).split('\n').length - 1;
    line += tok.split('\n').length - 1;
  }
  return null;
}

/** The body of the function ejs would compile for this source (as ejs.compile builds it, with
 * compileDebug), for the render process to compile inside a template's own realm: ejs itself
 * never runs there. Throws TemplateCompileError as checkTemplate does. */
export function templateFunctionBody(name: string, source: string): string {
  const body = generatedOrRefused(name, source);
  return (
    'let __line = 1\n' +
    `  , __lines = ${JSON.stringify(source)}\n` +
    `  , __filename = ${JSON.stringify(name)};\n` +
    'try {\n' +
    '  let __output = "";\n' +
    '  function __append(s) { if (s !== undefined && s !== null) __output += s }\n' +
    '  with (locals || {}) {\n' +
    `${body}\n` +
    '  }\n' +
    '  return __output;\n' +
    '} catch (e) {\n' +
    '  rethrow(e, __lines, __filename, __line, escapeFn);\n' +
    '}\n'
  );
}

/** What ejs generates for the source; a source with import() or one ejs cannot parse is
 * refused with its line. */
function generatedOrRefused(name: string, source: string): string {
  const at = importLine(source);
  if (at !== null) throw new TemplateCompileError(name, at, 'import() is not available in Quarry templates');
  try {
    return generated(source);
  } catch (err) {
    throw new TemplateCompileError(name, unclosedTagLine(source), err instanceof Error ? err.message : String(err));
  }
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
  const body = generatedOrRefused(name, source);
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
