// A specs file's text → validated documents, or errors that name the file, the document, the
// line, the column and the field. Hostile files are refused early: a size limit before parsing,
// a document-count limit, and yaml's alias-expansion limit (a "billion laughs" file fails on its
// first expansions instead of filling memory).
import { Composer, LineCounter, Parser, isScalar, type Document } from 'yaml';
import type { FieldError } from '../errors.js';
import { envelopeSchema, specInputSchemas, type SpecKind } from '../model/spec-inputs.js';
import { createAjv, toFieldErrors } from '../model/validate.js';
import type { ValidateFunction } from 'ajv';

export interface SpecLimits {
  maxBytes: number;
  maxDocuments: number;
  /** Alias expansions allowed per document (yaml's maxAliasCount). */
  maxAliases: number;
}

export const DEFAULT_LIMITS: SpecLimits = { maxBytes: 1024 * 1024, maxDocuments: 500, maxAliases: 100 };

export interface SpecError {
  file: string;
  /** Index of the document in the file; null for what concerns the whole file. */
  document: number | null;
  line: number;
  column: number;
  /** JSON pointer of the field ('' for the document or the file). */
  field: string;
  message: string;
}

export interface SpecDoc {
  file: string;
  index: number;
  kind: SpecKind;
  name: string;
  labels: Record<string, string>;
  state: 'present' | 'absent';
  /** Validated, defaults filled in. */
  spec: Record<string, unknown>;
  /** Positions of fields, for errors found after validation. */
  errorAt(errors: FieldError[]): SpecError[];
}

export interface ParsedFile {
  docs: SpecDoc[];
  errors: SpecError[];
}

type Validators = { envelope: ValidateFunction; kinds: Map<string, ValidateFunction> };

/** Compiled once: ajv with defaults filled, over the same schema objects the API uses. */
export function specValidators(): Validators {
  const ajv = createAjv({ useDefaults: true });
  return {
    envelope: ajv.compile(envelopeSchema),
    kinds: new Map(Object.entries(specInputSchemas).map(([k, s]) => [k, ajv.compile(s)])),
  };
}

const whole = (file: string, message: string, line = 1, column = 1): SpecError => ({
  file,
  document: null,
  line,
  column,
  field: '',
  message,
});

function positions(file: string, index: number, doc: Document.Parsed, lines: LineCounter) {
  return (errors: FieldError[]): SpecError[] =>
    errors.map((e) => {
      const parts = e.path
        .split('/')
        .slice(1)
        .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
      // The deepest node that exists: a missing field is reported where its parent is.
      let node: unknown;
      for (let n = parts.length; n >= 0 && !node; n--) node = n === 0 ? doc.contents : doc.getIn(parts.slice(0, n), true);
      const offset = (node as { range?: [number, number, number] } | undefined)?.range?.[0] ?? 0;
      const { line, col } = lines.linePos(offset);
      return { file, document: index, line, column: col, field: e.path === '/' ? '' : e.path, message: e.message };
    });
}

export function parseSpecText(file: string, text: string, v: Validators, limits: SpecLimits = DEFAULT_LIMITS): ParsedFile {
  if (Buffer.byteLength(text) > limits.maxBytes)
    return { docs: [], errors: [whole(file, `the file is larger than ${limits.maxBytes} bytes`)] };
  const lines = new LineCounter();
  // Composed one document at a time, so a file of too many documents stops being read there.
  const all: Document.Parsed[] = [];
  for (const doc of new Composer({ uniqueKeys: true }).compose(new Parser(lines.addNewLine).parse(text))) {
    if (all.push(doc) > limits.maxDocuments)
      return { docs: [], errors: [whole(file, `the file holds more than ${limits.maxDocuments} documents`)] };
  }
  const docs: SpecDoc[] = [];
  const errors: SpecError[] = [];
  all.forEach((doc, index) => {
    for (const e of doc.errors) {
      const { line, col } = lines.linePos(e.pos[0]);
      errors.push({ file, document: index, line, column: col, field: '', message: e.message.split('\n')[0] ?? e.message });
    }
    // A document of nothing (comments, a trailing ---) declares nothing.
    if (doc.errors.length || doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) return;
    const errorAt = positions(file, index, doc, lines);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: limits.maxAliases });
    } catch (err) {
      errors.push(...errorAt([{ path: '/', message: (err as Error).message }]));
      return;
    }
    const one = validate(file, index, value, v, errorAt);
    if ('errors' in one) errors.push(...one.errors);
    else docs.push(one);
  });
  return { docs, errors };
}

function validate(
  file: string,
  index: number,
  value: unknown,
  v: Validators,
  errorAt: SpecDoc['errorAt'],
): SpecDoc | { errors: SpecError[] } {
  if (!v.envelope(value)) return { errors: errorAt(toFieldErrors(v.envelope.errors)) };
  const env = value as {
    kind: SpecKind;
    metadata: { name: string; labels?: Record<string, string> };
    spec: Record<string, unknown> & { state: 'present' | 'absent' };
  };
  const { state, ...spec } = env.spec;
  const check = v.kinds.get(env.kind)!;
  if (!check(spec)) return { errors: errorAt(toFieldErrors(check.errors, '/spec')) };
  return { file, index, kind: env.kind, name: env.metadata.name, labels: env.metadata.labels ?? {}, state, spec, errorAt };
}
