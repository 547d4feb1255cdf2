// The nodes by rack, each with its phase, its daemons (Ready or why not) and what blocks it
// (GET /nodes/details).
import type { Session } from '../api.js';
import { useResource } from '../hooks.js';
import { NO_RACK } from '../logic.js';
import type { NodeDetail } from '../types.js';

export function Nodes({ session, tick }: { session: Session; tick: number }) {
  const r = useResource(() => session.get<NodeDetail[]>('/nodes/details'), tick);
  if (!r.data) return r.error ? <p class="error">{r.error}</p> : <p>Loading…</p>;
  if (r.data.length === 0) return <p>No machine has booted yet.</p>;
  const racks = new Map<string, NodeDetail[]>();
  for (const n of r.data) {
    const rack = n.labels?.rack ?? NO_RACK;
    racks.set(rack, [...(racks.get(rack) ?? []), n]);
  }
  return (
    <div class="racks">
      {[...racks.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([rack, nodes]) => (
          <section key={rack} class="rack-col" aria-label={rack === NO_RACK ? 'no rack' : `rack ${rack}`}>
            <h3>{rack === NO_RACK ? 'No rack' : `Rack ${rack}`}</h3>
            {nodes
              .sort((a, b) => a.hostname.localeCompare(b.hostname))
              .map((n) => (
                <NodeCard key={n.id} n={n} />
              ))}
          </section>
        ))}
    </div>
  );
}

function NodeCard({ n }: { n: NodeDetail }) {
  return (
    <article class={`node phase-${n.status}`} data-node={n.hostname}>
      <h4>
        <span class="hostname">{n.hostname || '(no hostname yet)'}</span>
        {n.name && n.name !== n.hostname && <span class="small"> {n.name}</span>}
      </h4>
      <p>
        <span class={`phase phase-${n.status}`}>{n.status}</span>
        {!n.approved && <span class="small"> · waiting for approval</span>}
        {n.ip && <span class="small"> · {n.ip}</span>}
      </p>
      <p class="small">
        {n.diskCount} disk(s), {n.osdCount} OSD(s)
      </p>
      {n.daemonsReady.length > 0 && (
        <ul class="daemons" aria-label="daemons">
          {n.daemonsReady.map((d) => (
            <li key={d.type} class={d.ready ? 'ok' : 'busy'} title={d.ready ? 'Ready' : `${d.reason}: ${d.message}`}>
              {d.type} <span class="small">{d.phase}</span>
            </li>
          ))}
        </ul>
      )}
      {!n.ready.ready && n.ready.reason && (
        <p class="small why">
          {n.ready.reason}: {n.ready.message}
        </p>
      )}
      {n.disruption && (
        <p class="small disruption">
          {n.disruption.kind}: {n.disruption.state === 'held' ? 'lease held' : 'waiting for the disruption budget'}
          {n.disruption.heldBy?.length ? ` (behind ${n.disruption.heldBy.join(', ')})` : ''}
        </p>
      )}
      {n.blocked && (
        <p class="blocked-why">
          Blocked: {n.blocked.reason} — {n.blocked.message}
        </p>
      )}
    </article>
  );
}
