// describe node|disk|run <name>: one object in full — what is wanted, what is, the conditions with
// their reasons, what blocks it, its recent runs and events.
import { Argument, type Command } from 'commander';
import { NODE_DAEMON_TYPES } from '../../catalogue/daemons.js';
import type { ApiClient } from '../client.js';
import { lookupFor, type Io } from '../context.js';
import { concerns, eventLine, recentEvents } from '../events.js';
import { age, bytes, clock, dash, short, table } from '../format.js';
import type { BlockedView, DiskView, LogLine, NodeView, QuestionView, RunView, StatusView } from '../views.js';

const RECENT = 10;

const section = (title: string, lines: string[]): string[] => (lines.length ? ['', `${title}:`, ...lines.map((l) => `  ${l}`)] : []);
const field = (label: string, value: unknown): string =>
  `${`${label}:`.padEnd(16)}${dash(typeof value === 'object' && value !== null ? JSON.stringify(value) : value)}`;

async function related(api: ApiClient, id: string, match: (r: RunView) => boolean) {
  const [runs, status, events] = await Promise.all([
    api.get<RunView[]>('/task/runs/recent?limit=1000'),
    api.get<StatusView>('/status'),
    recentEvents(api),
  ]);
  return {
    runs: runs.filter(match).slice(0, RECENT),
    blocked: status.blocked.filter((b) => b.id === id),
    events: events.filter((e) => concerns(e, id)).slice(-RECENT),
  };
}

function common(r: Awaited<ReturnType<typeof related>>): string[] {
  const runs = r.runs.map((x) => [short(x.id), x.taskName, x.state, age(x.createdAt), x.error?.split('\n')[0] ?? '']);
  return [
    ...section(
      'Blocked',
      r.blocked.map((b: BlockedView) => `${b.reason}: ${b.message}${b.since ? ` (since ${b.since})` : ''}${b.file ? ` [${b.file}]` : ''}`),
    ),
    ...section('Recent runs', runs.length ? table(['id', 'task', 'state', 'age', 'error'], runs).split('\n') : []),
    ...section('Recent events', r.events.map(eventLine)),
  ];
}

async function describeNode(api: ApiClient, n: NodeView): Promise<string[]> {
  const detail = await api.get<NodeView>(`/nodes/${n.id}`);
  const disks = (await api.get<DiskView[]>('/disks')).filter((d) => d.nodeId === n.id);
  const r = await related(api, n.id, (x) => x.targetId === n.id || x.nodeId === n.id);
  // The node detail says hasMon, hasMgr, ... for each daemon type a node may run.
  const wanted = NODE_DAEMON_TYPES.filter((d) => detail[`has${d[0]!.toUpperCase()}${d.slice(1)}`] === true);
  return [
    field('Hostname', detail.hostname),
    field('Name', detail.name),
    field('Id', detail.id),
    field(
      'Labels',
      Object.entries(detail.labels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(', '),
    ),
    ...section('Spec', [
      field('Role', detail.role),
      field('Daemons', wanted.join(', ') || 'none'),
      field('Fencing', detail.fencing),
      field('BMC', detail.bmc),
    ]),
    ...section('Status', [
      field('Phase', detail.status),
      field('IP', detail.ip),
      field('Approved', detail.approved),
      field('Disks', `${detail.diskCount} (${detail.osdCount} OSDs)`),
      field('Disruption', detail.disruption),
    ]),
    ...section('Conditions', [
      `Ready=${detail.ready?.ready ? 'True' : 'False'}  ${detail.ready?.reason ?? ''}${detail.ready?.message ? `: ${detail.ready.message}` : ''}`,
      ...(detail.blocked ? [`Blocked=True  ${detail.blocked.reason}: ${detail.blocked.message}`] : []),
      ...(detail.daemonsReady ?? []).map(
        (d) => `${d.type} Ready=${d.ready ? 'True' : 'False'}  ${d.phase}  ${d.reason}${d.message ? `: ${d.message}` : ''}`,
      ),
    ]),
    ...section(
      'Disks',
      table(
        ['device', 'serial', 'size', 'OSD', 'eligibility'],
        disks.map((d) => [
          d.devicePath,
          d.serial,
          bytes(d.capacityBytes),
          d.osdId === null ? '-' : `osd.${d.osdId} ${dash(d.osdState)}`,
          d.eligible ? 'eligible' : d.reasons.join(','),
        ]),
      ).split('\n'),
    ),
    ...common(r),
  ];
}

async function describeDisk(api: ApiClient, d: DiskView): Promise<string[]> {
  const r = await related(api, d.id, (x) => x.targetId === d.id);
  return [
    field('Disk', `${d.nodeHostname}:${d.devicePath}`),
    field('Serial', d.serial),
    field('Id', d.id),
    ...section('Spec', [field('OSD wanted', d.isOsd), field('Monitor store', d.isMon)]),
    ...section('Status', [
      field('Size', bytes(d.capacityBytes)),
      field('Class', d.deviceClass),
      field('OSD', d.osdId === null ? null : `osd.${d.osdId} ${dash(d.osdState)}`),
      field('Progress', d.progress),
    ]),
    ...section('Conditions', [
      `Eligible=${d.eligible ? 'True' : 'False'}${d.reasons.length ? `  ${d.reasons.join(', ')}` : ''}`,
      `Phase  ${dash(d.reason)}${d.message ? `: ${d.message}` : ''}`,
    ]),
    ...section(
      'History',
      (d.history ?? []).slice(-RECENT).map((h) => `${h.at}  ${h.event}${h.message ? `  ${h.message}` : ''}`),
    ),
    ...common(r),
  ];
}

async function describeRun(api: ApiClient, run: RunView, targetName: (id: string) => string | null): Promise<string[]> {
  const [logs, questions] = await Promise.all([
    api.get<LogLine[]>(`/task/run/${run.id}/logs`),
    api.get<QuestionView[]>('/task/questions/pending'),
  ]);
  const asked = questions.filter((q) => q.runId === run.id);
  return [
    field('Run', run.id),
    field('Task', run.taskName),
    field('State', run.state),
    field('Node', run.nodeHostname),
    field('Target', targetName(run.targetId) ? `${targetName(run.targetId)} (${run.targetId})` : run.targetId),
    field('Created', run.createdAt),
    field('Started', run.startedAt),
    field('Completed', run.completedAt),
    ...(run.error ? section('Error', run.error.split('\n')) : []),
    ...section(
      'Waiting for an answer',
      asked.map((q) => `${short(q.id)}  ${q.prompt}  [${q.options.join('/')}]  (quarry answer ${short(q.id)} <answer>)`),
    ),
    ...section(
      'Log (last 50 lines)',
      logs.slice(-50).map((l) => `${clock(l.timestamp)} ${l.level.padEnd(5)} ${l.message}`),
    ),
  ];
}

export function registerDescribe(program: Command, io: Io): void {
  program
    .command('describe')
    .description('show one node, disk or run in full: spec, status, conditions with reasons, recent runs and events')
    .addArgument(new Argument('<kind>', 'what it is').choices(['node', 'disk', 'run']))
    .argument('<name>', 'node: hostname, YAML name, MAC or id; disk: serial, node:/dev/path or id; run: id or its first characters')
    .action(async (kind: string, name: string, _o: unknown, cmd: Command) => {
      const { api, find } = await lookupFor(cmd, io);
      const lines =
        kind === 'node'
          ? await describeNode(api, await find.node(name))
          : kind === 'disk'
            ? await describeDisk(api, await find.disk(name))
            : await describeRun(api, await find.run(name), await find.targetNames());
      io.out(lines.join('\n'));
    });
}
