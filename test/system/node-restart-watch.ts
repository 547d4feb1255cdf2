// What the node-restart system test watches while the nodes reboot: Ceph's quorum sampled from the
// master's CLI, the disruption budget's lease events on a real SSE client of /events, and each
// node's status as the store saw every write of it (the watch misses none).
import { EventSource } from 'eventsource';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Doc } from '../../src/model/document.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import type { NetnsCluster } from './netns-cluster.js';

export interface QuorumSample {
  at: number;
  /** The quorum's size, 'electing' (an answer given while an election runs: odd election_epoch,
   * no quorum listed yet — the quorum forming again, counted as in cluster-faults.ts), or
   * 'no answer' (the CLI found no monitor able to answer within its deadline). */
  quorum: number | 'electing' | 'no answer';
  monmap: number;
}

/** `probe` every `everyMs` (after each answer) until stopped. */
function sampleEvery<T>(everyMs: number, probe: () => Promise<T>): { samples: T[]; stop: () => Promise<void> } {
  const samples: T[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      samples.push(await probe());
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    samples,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/** `ceph quorum_status` every `everyMs` (after each answer) until stopped. */
export function sampleQuorum(c: NetnsCluster, everyMs = 400): { samples: QuorumSample[]; stop: () => Promise<void> } {
  return sampleEvery(everyMs, async () => {
    const at = Date.now();
    try {
      const out = (await c.runner.run('ceph', c.ceph.args(['quorum_status']), { timeoutMs: 20_000 })).stdout;
      const s = JSON.parse(out) as { election_epoch: number; quorum_names: string[]; monmap: { mons: unknown[] } };
      const electing = s.election_epoch % 2 === 1 && s.quorum_names.length === 0;
      return { at, quorum: electing ? 'electing' : s.quorum_names.length, monmap: s.monmap.mons.length };
    } catch {
      return { at, quorum: 'no answer', monmap: 0 };
    }
  });
}

/** What each monitor says of itself over its admin socket (`mon_status`): answered at once, with
 * no election waited out, so a monitor that is down (no socket) or out of quorum shows. The CLI's
 * `quorum_status` above waits for a quorum and, while the leader's lease on a stopped monitor
 * runs, still lists it: it proves a quorum answered, this proves how many monitors were up. */
export interface MonitorSample {
  at: number;
  /** Monitor name → leader | peon | electing | probing | synchronizing, or 'down'. */
  states: Record<string, string>;
}

export function sampleMonitors(c: NetnsCluster, everyMs = 250): { samples: MonitorSample[]; stop: () => Promise<void> } {
  const stateOf = async (n: NetnsCluster['nodes'][number]): Promise<string> => {
    // The monitor is named by the node's hostname in Quarry, which need not be the namespace's.
    const sock = (await readdir(n.host.opts.runDir).catch(() => [] as string[])).find((f) => /^ceph-mon\..+\.asok$/.test(f));
    if (sock === undefined) return 'down';
    const asok = join(n.host.opts.runDir, sock);
    try {
      const out = (await c.runner.run('ceph', ['--admin-daemon', asok, 'mon_status'], { timeoutMs: 5_000 })).stdout;
      return (JSON.parse(out) as { state: string }).state;
    } catch {
      return 'down';
    }
  };
  return sampleEvery(everyMs, async () => {
    const at = Date.now();
    const states = await Promise.all(c.nodes.map(stateOf));
    return { at, states: Object.fromEntries(c.nodes.map((n, i) => [n.ns, states[i]!])) };
  });
}

/** A majority of the monitors up and in quorum, or forming it again (electing). */
export const monitorsKeepMajority = (s: MonitorSample): boolean => {
  const states = Object.values(s.states);
  return states.filter((x) => x === 'leader' || x === 'peon' || x === 'electing').length * 2 > states.length;
};

/** A majority of the monmap in quorum, or the quorum forming again during an election. */
export const hasMajority = (s: QuorumSample): boolean =>
  s.quorum === 'electing' || (typeof s.quorum === 'number' && s.quorum * 2 > s.monmap);

export interface LeaseEvent {
  type: 'disruption.lease.taken' | 'disruption.lease.released';
  seq: number;
  at: number;
  holderId: string;
  kind: string;
  domains: string[];
}

/** The lease events of /events, as an operator's browser gets them (the admin's cookies). */
export function listenLeases(c: NetnsCluster): { events: LeaseEvent[]; open: () => boolean; close: () => void } {
  const events: LeaseEvent[] = [];
  const es = new EventSource(new URL('/events', c.q.url).href, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: { ...(init.headers as Record<string, string>), cookie: [...c.admin.jar].map(([k, v]) => `${k}=${v}`).join('; ') },
      }),
  });
  es.onmessage = (ev) => {
    const data = JSON.parse(String(ev.data)) as { type: string; payload: Omit<LeaseEvent, 'type' | 'seq' | 'at'> };
    if (data.type !== 'disruption.lease.taken' && data.type !== 'disruption.lease.released') return;
    events.push({ type: data.type, seq: Number(ev.lastEventId), at: Date.now(), ...data.payload });
  };
  return { events, open: () => es.readyState === EventSource.OPEN, close: () => es.close() };
}

/** One lease's life: from its taken event to its released one (null while held). */
export interface LeaseSpan {
  holderId: string;
  taken: number;
  released: number | null;
}

/** The spans in the order they were taken (by event seq). */
export function leaseSpans(events: LeaseEvent[]): LeaseSpan[] {
  const spans: LeaseSpan[] = [];
  for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
    if (e.type === 'disruption.lease.taken') spans.push({ holderId: e.holderId, taken: e.seq, released: null });
    else {
      const open = spans.find((s) => s.holderId === e.holderId && s.released === null);
      if (open) open.released = e.seq;
    }
  }
  return spans;
}

export interface NodeSeen {
  phase: string | undefined;
  blocked: string | null;
  disruption: string | null;
  heldBy: number;
}

/** Each node's phase, Blocked reason and lease state at every write of its document. */
export function watchNodes(c: NetnsCluster): { seen: Map<string, NodeSeen[]>; stop: () => void } {
  const records = c.nodes.map((n) => ({
    id: n.id,
    r: c.record(Kind.Node, n.id, (d) => {
      const s = (d as Doc<NodeSpec, NodeStatusFields>).status;
      const blocked = (s.conditions ?? []).find((x) => x.type === 'Blocked' && x.status === 'True');
      return {
        phase: s.phase,
        blocked: blocked?.reason ?? null,
        disruption: s.disruption?.state ?? null,
        heldBy: s.disruption?.heldBy?.length ?? 0,
      } satisfies NodeSeen;
    }),
  }));
  return {
    seen: new Map(records.map(({ id, r }) => [id, r.values])),
    stop: () => records.forEach(({ r }) => r.stop()),
  };
}
