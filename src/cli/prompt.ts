// The password, never from argv: typed at a prompt that does not echo it, or read from stdin
// (`--password-stdin`, for scripts: `pass show quarry | quarry login ... --password-stdin`).
import { UsageError } from './errors.js';

export async function readStdin(stdin: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** Reads a line from the terminal with echo off. */
export function promptHidden(stdin: NodeJS.ReadStream, write: (s: string) => void, question: string): Promise<string> {
  if (!stdin.isTTY) throw new UsageError('no terminal to ask the password on: use --password-stdin');
  write(question);
  return new Promise((resolve, reject) => {
    let typed = '';
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (err: Error | null) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      write('\n');
      if (err) reject(err);
      else resolve(typed);
    };
    const onData = (s: string) => {
      for (const ch of s) {
        if (ch === '\r' || ch === '\n') {
          done(null);
          return;
        }
        if (ch === '\u0003') {
          done(new UsageError('canceled'));
          return;
        }
        if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
        else typed += ch;
      }
    };
    stdin.on('data', onData);
  });
}
