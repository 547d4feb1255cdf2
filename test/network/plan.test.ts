// The network plan, table-driven: what it does for each state of the NIC, the server, the
// rendered configuration and the last start.
import test from 'ava';
import type { DhcpExit, DhcpServerState } from '../../src/clients/dhcp.js';
import type { Doc } from '../../src/model/document.js';
import { masterNicId, type MasterInterface, type NetworkSpec, type NetworkStatus } from '../../src/model/network-kinds.js';
import { DHCP_START_TASK, planNetwork, type NetworkObserved } from '../../reconcilers/network/plan.js';
import type { RunInfo } from '../../reconcilers/shared/runs.js';
import { T0 } from '../builders.js';

const NIC: MasterInterface = {
  id: masterNicId('52:54:ff:00:00:01'),
  name: 'eno1',
  mac: '52:54:ff:00:00:01',
  ip: '10.250.0.1',
  prefix: 24,
  connected: true,
  mtu: 1500,
};
const HASH = 'a'.repeat(64);
const OLD = 'b'.repeat(64);
const BASE = 1_000;

function network(status: NetworkStatus = {}): Doc<NetworkSpec, NetworkStatus> {
  return {
    kind: 'Network',
    id: 'net-1',
    name: '10.250.0.0/24',
    metadata: {
      generation: 2,
      resourceVersion: 7,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      labels: {},
      source: { type: 'api' },
    },
    spec: {
      cidr: '10.250.0.0/24',
      gateway: '10.250.0.1',
      dnsServers: ['10.250.0.53'],
      rangeStart: '10.250.0.100',
      rangeEnd: '10.250.0.150',
      nicId: NIC.id,
    },
    status,
  };
}

const server = (configHash = HASH, nic = 'eno1'): DhcpServerState => ({ pid: 4242, configHash, nic, startedAt: T0 - 10_000 });
const exit = (reason: DhcpExit['reason'], at = T0 - 100, configHash = HASH): DhcpExit => ({
  at,
  configHash,
  reason,
  message: `${reason} happened`,
});
const run = (state: RunInfo['state'], over: Partial<RunInfo> = {}): RunInfo => ({
  id: 'run-1',
  state,
  attempt: 1,
  completedAt: T0 - 100,
  error: state === 'failed' ? 'boom' : null,
  args: { configHash: HASH },
  result: null,
  ...over,
});

function observed(o: Partial<NetworkObserved> = {}): NetworkObserved {
  return {
    id: 'net-1',
    network: network(),
    nic: NIC,
    interfacesError: null,
    port: 8080,
    desired: { config: 'conf', hash: HASH, bootUrl: 'http://10.250.0.1:8080/boot/config?mac=${net0/mac}' },
    renderError: null,
    running: null,
    lastExit: null,
    run: null,
    now: T0,
    nowIso: new Date(T0).toISOString(),
    retryBaseMs: BASE,
    pollMs: 5_000,
    ...o,
  };
}

const cond = (s: NetworkStatus | null, type: string) => s?.conditions?.find((c) => c.type === type);

const cases: Array<{
  name: string;
  o: Partial<NetworkObserved>;
  phase: NonNullable<NetworkStatus['phase']> | null;
  reason?: string;
  step: unknown;
  requeue: number | null;
  crashes?: number;
}> = [
  { name: 'first start', o: {}, phase: 'starting', reason: 'Starting', step: { kind: 'start', attempt: 1, crashes: 0 }, requeue: null },
  { name: 'serving the rendered bytes', o: { running: server() }, phase: 'running', reason: 'Serving', step: null, requeue: 5_000 },
  {
    name: 'a new configuration restarts',
    o: { running: server(OLD), network: network({ crashes: 3 }) },
    phase: 'starting',
    reason: 'Starting',
    step: { kind: 'start', attempt: 1, crashes: 0 },
    requeue: null,
    crashes: 0,
  },
  {
    name: 'the NIC was renamed: restart on the new name',
    o: { running: server(HASH, 'eth7') },
    phase: 'starting',
    step: { kind: 'start', attempt: 1, crashes: 0 },
    requeue: null,
  },
  { name: 'a start in progress is waited for', o: { run: run('running') }, phase: 'starting', step: null, requeue: null },
  { name: 'no port yet', o: { port: null }, phase: 'pending', reason: 'WaitingForApi', step: null, requeue: 100 },
  {
    name: 'missing NIC stops the server',
    o: { nic: null, running: server() },
    phase: 'degraded',
    reason: 'NicMissing',
    step: { kind: 'stop' },
    requeue: 5_000,
  },
  { name: 'NIC without an address', o: { nic: { ...NIC, ip: '' } }, phase: 'degraded', reason: 'NicNoAddress', step: null, requeue: 5_000 },
  {
    name: 'NIC outside the network',
    o: { nic: { ...NIC, ip: '192.168.1.4' }, running: server() },
    phase: 'degraded',
    reason: 'NicOutsideNetwork',
    step: { kind: 'stop' },
    requeue: 5_000,
  },
  {
    name: 'interfaces unreadable keeps the server',
    o: { interfacesError: 'ip: not found', running: server() },
    phase: 'degraded',
    reason: 'InterfacesUnreadable',
    step: null,
    requeue: 5_000,
  },
  {
    name: 'a template that fails keeps the server',
    o: { desired: null, renderError: 'x is not defined', running: server() },
    phase: 'degraded',
    reason: 'RenderFailed',
    step: null,
    requeue: 5_000,
  },
  {
    name: 'busy port: wait for the backoff',
    o: { run: run('failed'), lastExit: exit('PortBusy') },
    phase: 'degraded',
    reason: 'PortBusy',
    step: null,
    requeue: BASE - 100 + 1,
  },
  {
    name: 'busy port: try again once the backoff passed',
    o: { run: run('failed', { completedAt: T0 - 5_000 }), lastExit: exit('PortBusy', T0 - 5_000) },
    phase: 'degraded',
    reason: 'PortBusy',
    step: { kind: 'start', attempt: 2, crashes: 0 },
    requeue: null,
  },
  {
    name: 'a failed start of older bytes does not hold a new one',
    o: { run: run('failed', { args: { configHash: OLD } }), lastExit: exit('NicMissing', T0 - 100, OLD) },
    phase: 'starting',
    step: { kind: 'start', attempt: 1, crashes: 0 },
    requeue: null,
  },
  {
    name: 'died: restart after base × 2^crashes',
    o: { run: run('completed'), lastExit: exit('Exited', T0 - 100), network: network({ crashes: 1 }) },
    phase: 'degraded',
    reason: 'Exited',
    step: null,
    requeue: 2 * BASE - 100,
    crashes: 1,
  },
  {
    name: 'died: restarted once the wait is over',
    o: { run: run('completed'), lastExit: exit('Exited', T0 - 2_000), network: network({ crashes: 1 }) },
    phase: 'degraded',
    reason: 'Exited',
    step: { kind: 'start', attempt: 1, crashes: 2 },
    requeue: null,
    crashes: 2,
  },
];

for (const c of cases) {
  test(`network plan ${c.name}`, (t) => {
    const p = planNetwork(observed(c.o));
    t.is(p.status?.phase ?? null, c.phase);
    if (c.reason) t.is(cond(p.status, c.reason === 'Serving' ? 'Ready' : c.phase === 'degraded' ? 'Degraded' : 'Ready')?.reason, c.reason);
    t.deepEqual(p.step, c.step);
    t.is(p.requeueAfterMs, c.requeue);
    if (c.crashes !== undefined) t.is(p.status?.crashes, c.crashes);
  });
}

test('network plan status carries the pid and hash only of a server that keeps running', (t) => {
  const ok = planNetwork(observed({ running: server() }));
  t.like(ok.status, {
    pid: 4242,
    configHash: HASH,
    nicName: 'eno1',
    bootUrl: 'http://10.250.0.1:8080/boot/config?mac=${net0/mac}',
    observedGeneration: 2,
  });
  t.is(cond(ok.status, 'Ready')?.status, 'True');
  t.is(cond(ok.status, 'Degraded')?.status, 'False');
  const gone = planNetwork(observed({ nic: null, running: server() }));
  t.like(gone.status, { pid: null, configHash: null, nicName: '' });
  t.is(cond(gone.status, 'Degraded')?.status, 'True');
  t.is(cond(gone.status, 'Ready')?.status, 'False');
});

test('network plan a deleted network stops its server and writes nothing', (t) => {
  t.deepEqual(planNetwork(observed({ network: null, running: server() })), {
    status: null,
    step: { kind: 'stop' },
    requeueAfterMs: null,
    gate: null,
  });
  t.deepEqual(planNetwork(observed({ network: null })), { status: null, step: null, requeueAfterMs: null, gate: null });
});

test('network plan the same world twice gives a deep-equal status (no write, no wake)', (t) => {
  const first = planNetwork(observed({ running: server() }));
  const again = planNetwork(
    observed({ running: server(), network: network(first.status!), now: T0 + 60_000, nowIso: new Date(T0 + 60_000).toISOString() }),
  );
  t.deepEqual(again.status, first.status);
  t.is(DHCP_START_TASK, 'network.dhcp.start');
});
