// Is it done, is it healthy: Ceph's health, convergence per kind, what blocks and why
// (GET /status), the failure-domain map, capacity over time, and the live event feed.
import { useRef } from 'preact/hooks';
import { ApiError, type Session } from '../api.js';
import { useResource } from '../hooks.js';
import { age, eventLine, failureDomains } from '../logic.js';
import type { CephMetrics, DiskView, LiveEvent, NodeDetail, StatusSummary } from '../types.js';
import { CapacityChart, type Sample } from './chart.js';
import { FailureDomainMap } from './map.js';

interface OverviewData {
  status: StatusSummary;
  nodes: NodeDetail[];
  disks: DiskView[];
  metrics: CephMetrics | null;
}

/** Readiness can change without an event (Ceph's health, a heartbeat): read again this often. */
const POLL_MS = 10_000;

export function Overview({ session, tick, feed }: { session: Session; tick: number; feed: LiveEvent[] }) {
  const samples = useRef<Sample[]>([]);
  const r = useResource<OverviewData>(
    async () => {
      const [status, nodes, disks, metrics] = await Promise.all([
        session.get<StatusSummary>('/status'),
        session.get<NodeDetail[]>('/nodes/details'),
        session.get<DiskView[]>('/disks'),
        session.get<CephMetrics>('/ceph/metrics').catch((err: unknown) => {
          if (err instanceof ApiError && err.problem.status === 503) return null; // no quorum yet
          throw err;
        }),
      ]);
      if (metrics) samples.current = [...samples.current, { at: Date.now(), ...metrics }].slice(-120);
      return { status, nodes, disks, metrics };
    },
    tick,
    POLL_MS,
  );
  if (!r.data) return r.error ? <p class="error">{r.error}</p> : <p>Loading…</p>;
  const { status, nodes, disks } = r.data;
  const now = Date.now();
  return (
    <div class="overview">
      <section class="cards" aria-label="Summary">
        <div class={`card health health-${status.health.status}`}>
          <h3>Ceph health</h3>
          <p id="health">{status.health.status}</p>
        </div>
        <div class={`card ${status.converged ? 'ok' : 'busy'}`}>
          <h3>Declared state</h3>
          <p id="converged" data-converged={String(status.converged)}>
            {status.converged ? 'converged' : 'converging'}
          </p>
          <p class="small">{status.blockedCount} object(s) not Ready</p>
        </div>
      </section>
      {status.health.checks.length > 0 && (
        <section aria-labelledby="checks-h">
          <h3 id="checks-h">Health checks</h3>
          <ul class="checks">
            {status.health.checks.map((c) => (
              <li key={c.code} class={`sev-${c.severity}`}>
                <strong>{c.code}</strong> {c.message}
              </li>
            ))}
          </ul>
        </section>
      )}
      <section aria-labelledby="conv-h">
        <h3 id="conv-h">Convergence by kind</h3>
        <table class="convergence">
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Ready</th>
              <th scope="col">
                <span class="sr-only">Progress</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {status.convergence.map((c) => (
              <tr key={c.kind} data-kind={c.kind}>
                <th scope="row">{c.kind}</th>
                <td>
                  {c.ready} / {c.total}
                </td>
                <td>
                  <meter min={0} max={Math.max(1, c.total)} value={c.ready} aria-label={`${c.kind} ready`} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section aria-labelledby="blocked-h">
        <h3 id="blocked-h">Not Ready ({status.blockedCount})</h3>
        {status.blocked.length === 0 ? (
          <p>Everything declared is Ready.</p>
        ) : (
          <table class="blocked">
            <thead>
              <tr>
                <th scope="col">Object</th>
                <th scope="col">Reason</th>
                <th scope="col">Message</th>
                <th scope="col">Since</th>
              </tr>
            </thead>
            <tbody>
              {status.blocked.map((b) => (
                <tr key={`${b.kind}/${b.id}/${b.name}/${b.file ?? ''}`}>
                  <td>
                    {b.kind} <strong>{b.name}</strong>
                    {b.file && <span class="small"> ({b.file})</span>}
                  </td>
                  <td>{b.reason}</td>
                  <td>
                    {b.message}
                    {b.checks.map((c) => (
                      <div key={c.code} class={`small sev-${c.severity}`}>
                        {c.code}: {c.message}
                      </div>
                    ))}
                  </td>
                  <td>{age(b.since, now)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="map-h">
        <h3 id="map-h">Failure domains</h3>
        <FailureDomainMap racks={failureDomains(nodes, disks)} />
      </section>
      <section aria-labelledby="cap-h">
        <h3 id="cap-h">Capacity and placement groups</h3>
        <CapacityChart samples={samples.current} />
      </section>
      <section aria-labelledby="feed-h">
        <h3 id="feed-h">Live events</h3>
        <ol id="feed" class="feed">
          {feed.map((e) => (
            <li key={e.id}>
              <time>{e.at ? new Date(e.at).toLocaleTimeString() : ''}</time> {eventLine(e)}
            </li>
          ))}
        </ol>
      </section>
    </div>
  );
}
