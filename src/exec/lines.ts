// Output plumbing shared by runners: bytes → whole lines, and secret values → '***'.
import { StringDecoder } from 'node:string_decoder';
import { isSecret, type Arg } from './runner.js';

export const MASK = '***';

/** Replaces every occurrence of a secret argument's value. A command may echo what it was
 * given (a usage error, `set -x`), so masking the command line alone is not enough. */
export function secretMasker(args: Arg[]): (text: string) => string {
  // Longest first, so a secret that contains another is masked whole.
  const secrets = args
    .filter(isSecret)
    .map((a) => a.secret)
    .filter((s) => s.length > 0)
    .sort((a, b) => b.length - a.length);
  if (secrets.length === 0) return (text) => text;
  return (text) => secrets.reduce((out, s) => out.split(s).join(MASK), text);
}

/** Cuts a byte stream into lines as it arrives. A decoder keeps a multi-byte character that
 * straddles two chunks intact; `end()` flushes a last line without a newline. */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';

  constructor(private readonly emit: (line: string) => void) {}

  write(chunk: Buffer | string): void {
    const text = this.rest + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
    const parts = text.split('\n');
    this.rest = parts.pop() ?? '';
    for (const part of parts) this.emit(stripCr(part));
  }

  end(): void {
    const text = this.rest + this.decoder.end();
    this.rest = '';
    if (text.length > 0) this.emit(stripCr(text));
  }
}

const stripCr = (line: string): string => (line.endsWith('\r') ? line.slice(0, -1) : line);
