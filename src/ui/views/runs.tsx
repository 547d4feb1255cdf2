// Recent task runs (GET /task/runs/recent) and the log of the one chosen
// (GET /task/run/{id}/logs). Log lines are not on /events (they would crowd state changes out of
// its replay buffer), so a run still going has its log read again every second until it ends.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Session } from '../api.js';
import { useResource } from '../hooks.js';
import { age } from '../logic.js';
import type { LogLine, Run } from '../types.js';

const FINISHED = new Set(['completed', 'failed', 'canceled']);

export function Runs({ session, tick }: { session: Session; tick: number }) {
  const r = useResource(() => session.get<Run[]>('/task/runs/recent?limit=200'), tick);
  const [chosen, setChosen] = useState<string | null>(null);
  if (!r.data) return r.error ? <p class="error">{r.error}</p> : <p>Loading…</p>;
  const run = r.data.find((x) => x.id === chosen) ?? null;
  const now = Date.now();
  return (
    <div class="runs">
      <table>
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col">State</th>
            <th scope="col">Node</th>
            <th scope="col">Created</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {r.data.map((x) => (
            <tr key={x.id} data-run={x.id} class={x.id === chosen ? 'chosen' : undefined}>
              <td>
                <button type="button" class="link" onClick={() => setChosen(x.id)}>
                  {x.taskName}
                </button>
              </td>
              <td class={`state state-${x.state}`}>{x.state}</td>
              <td>{x.nodeHostname ?? ''}</td>
              <td>{age(x.createdAt, now)}</td>
              <td class="small">{x.error ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {run && <RunLog session={session} run={run} />}
    </div>
  );
}

function RunLog({ session, run }: { session: Session; run: Run }) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [error, setError] = useState<string | null>(null);
  const going = !FINISHED.has(run.state);
  const box = useRef<HTMLPreElement>(null);
  useEffect(() => {
    let live = true;
    const read = () =>
      session.get<LogLine[]>(`/task/run/${run.id}/logs`).then(
        (l) => {
          if (live) setLines(l);
        },
        (err: unknown) => {
          if (live) setError(String(err));
        },
      );
    void read();
    const t = going ? setInterval(() => void read(), 1_000) : undefined;
    return () => {
      live = false;
      clearInterval(t);
    };
  }, [session, run.id, run.state, going]);
  useEffect(() => {
    if (box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines.length]);
  return (
    <section class="log" aria-labelledby="log-h">
      <h3 id="log-h">
        {run.taskName} <span class={`state state-${run.state}`}>{run.state}</span>
        {going && <span class="small"> (following)</span>}
      </h3>
      {error && <p class="error">{error}</p>}
      <pre ref={box} id="run-log" aria-live="polite">
        {lines.map((l) => `${l.timestamp.slice(11, 23)} ${l.level.padEnd(5)} ${l.message}`).join('\n')}
      </pre>
    </section>
  );
}
