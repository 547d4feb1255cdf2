// wait --for converged: polls GET /status (or a file's entry of GET /specs/status) until every
// object is Ready, saying what still blocks whenever that changes; exit 3 at the timeout.
import { Option, type Command } from 'commander';
import type { ApiClient } from '../client.js';
import { clientFor, type Io } from '../context.js';
import { NotConvergedError, UsageError } from '../errors.js';
import { clock } from '../format.js';
import type { BlockedView, StatusView } from '../views.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `10m`, `30s`, `1h`, `500ms`, or a number of seconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) throw new UsageError(`not a duration: ${text} (say 30s, 10m, 1h)`);
  return Math.round(Number(m[1]) * (UNITS[m[2] ?? 's'] ?? 1000));
}

interface Progress {
  converged: boolean;
  summary: string;
  blocked: BlockedView[];
}

async function overall(api: ApiClient): Promise<Progress> {
  const s = await api.get<StatusView>('/status');
  const kinds = s.convergence.filter((c) => c.ready < c.total).map((c) => `${c.kind} ${c.ready}/${c.total}`);
  return {
    converged: s.converged,
    summary: s.converged
      ? `converged (health ${s.health.status})`
      : `not converged: ${kinds.join(', ') || 'health'}; ${s.blockedCount} blocked`,
    blocked: s.blocked,
  };
}

async function ofFile(api: ApiClient, file: string): Promise<Progress> {
  const all = await api.get<Array<{ file: string; state: string; converged?: boolean; blocking?: BlockedView[] }>>('/specs/status');
  const f = all.find((x) => x.file === file);
  if (!f) return { converged: false, summary: `${file}: not in the specs folder (yet)`, blocked: [] };
  return {
    converged: f.converged === true,
    summary: f.converged ? `${file}: converged` : `${file}: ${f.state}, not converged`,
    blocked: f.blocking ?? [],
  };
}

const blockedLine = (b: BlockedView): string => `  ${b.kind} ${b.name || b.id}: ${b.reason}${b.message ? `: ${b.message}` : ''}`;

export function registerWait(program: Command, io: Io): void {
  program
    .command('wait')
    .description('wait until the declared state is reached, printing progress; exit 3 if it is not before the timeout')
    .addOption(new Option('--for <condition>', 'what to wait for').choices(['converged']).makeOptionMandatory())
    .option('--timeout <duration>', 'give up after this long (30s, 10m, 1h)', '10m')
    .option('--interval <duration>', 'how often to ask', '1s')
    .option('--file <name>', 'only what this specs file declares (GET /specs/status)')
    .action(async (o: { timeout: string; interval: string; file?: string }, cmd: Command) => {
      const timeout = parseDuration(o.timeout);
      const interval = Math.max(100, parseDuration(o.interval));
      const api = await clientFor(cmd, io);
      const deadline = Date.now() + timeout;
      let said = '';
      let last: Progress | null = null;
      for (;;) {
        last = o.file ? await ofFile(api, o.file) : await overall(api);
        const now = `${last.summary}|${last.blocked.slice(0, 3).map(blockedLine).join()}`;
        if (now !== said) {
          io.out(`${clock(new Date().toISOString())} ${last.summary}`);
          if (!last.converged) for (const b of last.blocked.slice(0, 3)) io.out(blockedLine(b));
          said = now;
        }
        if (last.converged) return;
        if (Date.now() + interval > deadline) break;
        await new Promise((r) => setTimeout(r, interval));
      }
      const lines = last.blocked.slice(0, 10).map(blockedLine);
      throw new NotConvergedError(`not converged after ${o.timeout}${lines.length ? `; still blocked:\n${lines.join('\n')}` : ''}`);
    });
}
