// events [-w] and logs <run> [-f]: what happened, with times and names; -w / -f keep following.
import type { Command } from 'commander';
import { clientFor, lookupFor, type Io } from '../context.js';
import { UnreachableError } from '../errors.js';
import { eventLine, liveEvents, recentEvents } from '../events.js';
import { clock } from '../format.js';
import type { LogLine, RunView } from '../views.js';

const FINAL = new Set(['completed', 'failed', 'canceled']);

/** Until Ctrl-C (or the process's end). */
function interrupted(): AbortSignal {
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  process.once('SIGTERM', () => abort.abort());
  return abort.signal;
}

export function registerStream(program: Command, io: Io): void {
  program
    .command('events')
    .description('the events the server still holds (time, type, object by name, what happened); -w follows new ones live')
    .option('-w, --watch', 'keep following the live stream (Ctrl-C to stop)')
    .option('--type <prefix>', 'only events whose type starts with this (task., node., specs., ...)')
    .action(async (o: { watch?: boolean; type?: string }, cmd: Command) => {
      const api = await clientFor(cmd, io);
      const wanted = (t: string) => !o.type || t.startsWith(o.type);
      const held = await recentEvents(api);
      for (const e of held) if (wanted(e.type)) io.out(eventLine(e));
      if (!o.watch) return;
      const last = held.at(-1)?.id;
      const signal = interrupted();
      for await (const e of liveEvents(api, signal, last)) {
        if (e.type === 'resync') io.out(`${clock(new Date().toISOString())}  (missed events: the server's buffer moved on)`);
        else if (wanted(e.type)) io.out(eventLine(e));
      }
      if (!signal.aborted) throw new UnreachableError('the event stream ended: the server stopped, or the token was revoked');
    });
  program
    .command('logs')
    .description("a task run's log; -f follows it until the run ends")
    .argument('<run>', 'the run id or its first characters')
    .option('-f, --follow', 'keep printing new lines until the run is completed, failed or canceled')
    .action(async (name: string, o: { follow?: boolean }, cmd: Command) => {
      const { api, find } = await lookupFor(cmd, io);
      const run = await find.run(name);
      const signal = o.follow ? interrupted() : null;
      let printed = 0;
      for (;;) {
        const [logs, now] = await Promise.all([
          api.get<LogLine[]>(`/task/run/${run.id}/logs`),
          o.follow ? api.get<RunView>(`/task/run/${run.id}`) : run,
        ]);
        for (const l of logs.slice(printed)) io.out(`${clock(l.timestamp)} ${l.level.padEnd(5)} ${l.message}`);
        printed = Math.max(printed, logs.length);
        if (!o.follow || FINAL.has(now.state) || signal?.aborted) {
          if (o.follow) io.out(`run ${run.id.slice(0, 8)} ${now.state}${now.error ? `: ${now.error}` : ''}`);
          return;
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    });
}
