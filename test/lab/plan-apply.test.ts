// Plan = apply (#16): for generated sequences of spec changes — the first apply, then growing,
// shrinking, moving, removing and re-adding what a file declares, changing pool defaults and
// networks, a node's maintenance entered and left — the dry run (POST /specs/plan) lists
// exactly the task runs the lab then starts.
// One lab per sequence: a generated step is made valid for the world it meets by a model of the
// file (what it declares, and what is declared absent), kept beside the lab.
//
// What the plan cannot know is left out of the comparison, and only that: a retry (a run whose
// `attempt` is above 1: a failed run's next attempt is a run of its own) is the answer to a
// failure, not a change of the file. Everything else counts — a restart of a daemon that should
// have been made afresh, a run on another object, a run twice. A document the plan reports
// `pending` (waiting for the world) has no runs in the plan: a step is planned once nothing of
// its text is pending, so the plan it is compared with is the one of a world that lets it apply.
import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { Kind, type DiskSpec, type DiskStatusFields } from '../../src/model/kinds.js';
import type { DiskDoc, NodeDoc } from '../../src/model/operations.js';
import { diskReasons } from '../../src/model/operations.js';
import type { PlanView } from '../../src/gitops/evaluate.js';
import type { Client } from '../http/client.js';
import { doc, files } from '../gitops/fixtures.js';
import { ENO1, specsLab, type SpecsLab } from '../gitops/helpers.js';
import { allActive, waitFor } from './harness.js';

const FILE = 'cluster.yaml';
const MACHINES = 4;
const MACS = ['52:54:00:00:00:01', '52:54:00:00:00:02', '52:54:00:00:00:03', '52:54:00:00:00:04'];
/** PLAN_APPLY_SEED reproduces a failure (its seed is printed); PLAN_APPLY_RUNS asks for more. */
const SEED = Number(process.env.PLAN_APPLY_SEED ?? 1616);
const RUNS = Number(process.env.PLAN_APPLY_RUNS ?? 4);
const STEPS = Number(process.env.PLAN_APPLY_STEPS ?? 8);

type On = 'on' | 'absent' | null;
type Keyed = 'mgr' | 'mds' | 'rgw';
const KEYED: readonly Keyed[] = ['mgr', 'mds', 'rgw'];

interface NodeModel {
  declared: boolean;
  /** Its CRUSH rack label, if any. */
  rack?: string;
  mon: On;
  mgr: On;
  mds: On;
  rgw: On;
  osds: Array<{ serial: string; state: 'on' | 'absent' }>;
  /** `maintenance: true`: its Ceph daemons stopped under noout. */
  maintenance?: boolean;
}

/** What the file says, which the generator's steps change. */
interface Model {
  nodes: NodeModel[];
  clusterNetwork: string;
  minSize: number;
  fs: 'on' | 'absent';
  user: 'on' | 'absent';
}

/** The disks each machine offers: its monitor's, then those OSDs may take. */
interface Disks {
  mon: string[];
  spare: string[][];
}

const NETS = ['10.0.0.0/16', '10.0.0.0/8'];

function start(d: Disks): Model {
  const node = (i: number, roles: Partial<Record<Keyed, On>>): NodeModel => ({
    declared: i < 3,
    mon: i < 3 ? 'on' : null,
    mgr: roles.mgr ?? null,
    mds: roles.mds ?? null,
    rgw: roles.rgw ?? null,
    osds: i < 3 ? [{ serial: d.spare[i]![0]!, state: 'on' }] : [],
  });
  return {
    nodes: [node(0, { mgr: 'on' }), node(1, { mds: 'on' }), node(2, { rgw: 'on' }), node(3, {})],
    clusterNetwork: NETS[0]!,
    minSize: 2,
    fs: 'on',
    user: 'on',
  };
}

const absentText = (s: 'on' | 'absent') => (s === 'absent' ? '\nstate: absent' : '');

function render(m: Model, d: Disks, publicNetwork = '10.0.0.0/16'): string {
  const nodes = m.nodes.flatMap((n, i) => {
    if (!n.declared) return [];
    const daemons: string[] = [];
    if (n.mon) daemons.push(n.mon === 'on' ? `mon: { disk: { serial: ${d.mon[i]} } }` : 'mon: { state: absent }');
    for (const k of KEYED) if (n[k]) daemons.push(n[k] === 'on' ? `${k}: {}` : `${k}: { state: absent }`);
    const osds = n.osds.map((o) => `{ serial: ${o.serial}${o.state === 'absent' ? ', state: absent' : ''} }`);
    const text = doc(
      'Node',
      `storage-${i + 1}`,
      `match: { mac: "${MACS[i]}" }\ndaemons: { ${daemons.join(', ')} }\nosds: [${osds.join(', ')}]`,
    );
    const spec = n.maintenance ? text.replace('spec:\n', 'spec:\n  maintenance: true\n') : text;
    const name = `  name: storage-${i + 1}\n`;
    return [n.rack ? spec.replace(name, `${name}  labels: { rack: ${n.rack} }\n`) : spec];
  });
  return files(
    doc(
      'Cluster',
      'default',
      `publicNetwork: ${publicNetwork}\nclusterNetwork: ${m.clusterNetwork}\npoolDefaults: { size: 3, minSize: ${m.minSize} }`,
    ),
    doc('Network', 'lab', `cidr: 10.0.0.0/16\ngateway: 10.0.0.1\nnicId: ${ENO1}`),
    ...nodes,
    doc('Filesystem', 'cephfs', `name: cephfs\nmetadataPool: cephfs_metadata\ndataPool: cephfs_data${absentText(m.fs)}`),
    doc('RgwUser', 'demo', `userId: demo\ndisplayName: Demo user${absentText(m.user)}`),
  );
}

/** A step: what it does to the model (a copy), or, for a refused change, the text to refuse. */
type Step = { what: string; next: Model } | { what: string; refused: string };

const clone = (m: Model): Model => structuredClone(m);
const on = (m: Model, k: Keyed | 'mon') => m.nodes.filter((n) => n.declared && n[k] === 'on').length;

/** Every step valid in `m`: never the last manager, the last MDS of a filesystem, the RGW of a
 * user, a monitor below three, nor the last OSD of a host (its data has nowhere to go); one
 * node in maintenance at a time, and nothing else until it leaves. */
function steps(m: Model, d: Disks): Step[] {
  const out: Step[] = [];
  const edit = (what: string, f: (x: Model) => void) => {
    const next = clone(m);
    f(next);
    out.push({ what, next });
  };
  // A node in maintenance holds the disruption budget (one failure domain at a time): what
  // else would disrupt waits for it, so the window only ends.
  const inside = m.nodes.findIndex((n) => n.maintenance);
  if (inside >= 0) {
    edit(`maintenance: node ${inside + 1} leaves`, (x) => delete x.nodes[inside]!.maintenance);
    return out;
  }
  m.nodes.forEach((n, i) => {
    if (!n.declared) {
      edit(`grow: node ${i + 1} with an OSD`, (x) =>
        Object.assign(x.nodes[i]!, { declared: true, osds: [{ serial: d.spare[i]![0]!, state: 'on' }] }),
      );
      return;
    }
    const free = d.spare[i]!.filter((s) => !n.osds.some((o) => o.serial === s));
    if (free.length) edit(`grow: an OSD on node ${i + 1}`, (x) => x.nodes[i]!.osds.push({ serial: free[0]!, state: 'on' }));
    const live = n.osds.filter((o) => o.state === 'on');
    if (live.length >= 2)
      edit(
        `shrink: OSD ${live[1]!.serial} of node ${i + 1} absent`,
        (x) => (x.nodes[i]!.osds.find((o) => o.serial === live[1]!.serial)!.state = 'absent'),
      );
    n.osds.forEach((o, j) => {
      if (o.state === 'absent') edit(`re-add: OSD ${o.serial} of node ${i + 1}`, (x) => (x.nodes[i]!.osds[j]!.state = 'on'));
    });
    // Not the only MDS of a live filesystem: Ceph says it is not ok to stop, and the node waits.
    const lastMds = n.mds === 'on' && m.fs === 'on' && on(m, 'mds') < 2;
    if (n.mon === 'on' && on(m, 'mon') === 3 && !lastMds)
      edit(`maintenance: node ${i + 1} enters`, (x) => (x.nodes[i]!.maintenance = true));
    // A node's rack label: its CRUSH host moves under another bucket, and its OSDs' data with it.
    edit(`labels: node ${i + 1} in rack ${n.rack === 'r1' ? 'r2' : 'r1'}`, (x) => (x.nodes[i]!.rack = n.rack === 'r1' ? 'r2' : 'r1'));
    if (n.mon === 'on' && on(m, 'mon') === 3) edit(`remove: monitor of node ${i + 1}`, (x) => (x.nodes[i]!.mon = 'absent'));
    if (n.mon === 'absent') edit(`re-add: monitor of node ${i + 1}`, (x) => (x.nodes[i]!.mon = 'on'));
    for (const k of KEYED) {
      if (n[k] === null) edit(`grow: ${k} on node ${i + 1}`, (x) => (x.nodes[i]![k] = 'on'));
      if (n[k] === 'absent') edit(`re-add: ${k} of node ${i + 1}`, (x) => (x.nodes[i]![k] = 'on'));
      const keep = k === 'mgr' || (k === 'mds' && m.fs === 'on') || (k === 'rgw' && m.user === 'on');
      if (n[k] === 'on' && (!keep || on(m, k) >= 2)) edit(`remove: ${k} of node ${i + 1}`, (x) => (x.nodes[i]![k] = 'absent'));
      if (n[k] === 'on' && (k === 'mgr' || k === 'mds'))
        m.nodes.forEach((to, j) => {
          if (to.declared && to[k] === null)
            edit(`move: ${k} from node ${i + 1} to node ${j + 1}`, (x) => ((x.nodes[i]![k] = null), (x.nodes[j]![k] = 'on')));
        });
    }
  });
  if (m.fs === 'on') edit('remove: filesystem', (x) => (x.fs = 'absent'));
  else edit('re-add: filesystem', (x) => (x.fs = 'on'));
  if (m.user === 'on') edit('remove: RGW user', (x) => (x.user = 'absent'));
  else if (on(m, 'rgw') > 0) edit('re-add: RGW user', (x) => (x.user = 'on'));
  edit('pool defaults: minSize', (x) => (x.minSize = x.minSize === 2 ? 1 : 2));
  edit('networks: clusterNetwork', (x) => (x.clusterNetwork = NETS.find((c) => c !== x.clusterNetwork)!));
  out.push({ what: 'networks: publicNetwork (refused)', refused: render(m, d, '10.0.0.0/8') });
  return out;
}

/** (task, kind, id) as one string, for multisets; the name only for a reader. */
const key = (task: string, kind: string, id: string, name?: string | null) => `${task} ${kind}/${id} (${name ?? '?'})`;
const bare = (k: string) => k.replace(/ \(.*\)$/, '');
/** The multiset xs − ys (by task, kind and id). */
function minus(xs: string[], ys: string[]): string[] {
  const left = [...ys.map(bare)];
  return xs.filter((x) => {
    const i = left.indexOf(bare(x));
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

async function plan(c: Client, text: string): Promise<PlanView> {
  const r = await c.request<PlanView>('POST', `/specs/plan?file=${FILE}`, { body: text, headers: { 'content-type': 'application/yaml' } });
  if (r.status !== 200) throw new Error(`plan: ${r.status} ${r.text}`);
  return r.json;
}

interface FileView {
  file: string;
  state: string;
  appliedAt: string | null;
  converged?: boolean;
  blocking?: unknown[];
  lastError?: { message: string } | null;
}
const fileOf = async (c: Client) => (await c.get<FileView[]>('/specs/status')).json.find((f) => f.file === FILE);

/** Answers "yes" to questions a confirm task of the plan announced; any other question fails. */
async function answer(c: Client, planned: PlanView): Promise<void> {
  const open = (await c.get<Array<{ id: string; taskName: string; options: string[] }>>('/task/questions/pending')).json;
  for (const q of open) {
    if (!planned.tasks.some((t) => t.task === q.taskName && t.question))
      throw new Error(`a question the plan did not announce: ${q.taskName}`);
    const yes = q.options.find((o) => /^yes/i.test(o))!;
    await c.post(`/task/question/${q.id}/answer`, { answer: yes });
  }
}

/** Every node runs the daemons its spec declares and no other (none in maintenance): the
 * property test checks this itself, beside the readiness rule. */
async function daemonsAsDeclared(q: SpecsLab): Promise<boolean> {
  return (await q.nodes()).every((n) =>
    (['mon', ...KEYED] as const).every(
      (k) => (n.spec.daemons[k] !== undefined && n.spec.maintenance !== true) === (n.status.daemons?.[k] === true),
    ),
  );
}

/** Plans `text`, applies it, waits until the file has converged and no run is under way, and
 * compares the plan with the runs started since. */
async function step(t: ExecutionContext, q: SpecsLab, c: Client, text: string, what: string): Promise<void> {
  // A document that waits for the world (a monitor's disk still reported with the old store's
  // filesystem a moment after its removal) is `pending` in the plan, and its runs start when the
  // folder applies it again later: the comparison starts once nothing waits.
  const planned = await waitFor(`${what}: nothing pending`, async () => {
    const p = await plan(c, text);
    return p.pending.length === 0 ? p : undefined;
  }).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}: ${JSON.stringify((await plan(c, text)).pending)}`);
  });
  if (process.env.PLAN_APPLY_DEBUG) t.log(`${what}: plan ${JSON.stringify(planned.tasks.map((x) => x.task))}`);
  t.deepEqual(planned.errors, [], `${what}: the plan accepts it`);
  const before = new Set((await q.tasks.recent(10_000)).map((r) => r.id));
  await q.put(FILE, text);
  // This text applied (not the one before, which the folder re-applies on world changes): its
  // plan now changes nothing.
  // (A failed state may be the text before's, refused: it is not this text's answer.)
  await waitFor(`${what}: applied`, async () => {
    const f = await fileOf(c);
    const p = await plan(c, text);
    return f?.state === 'applied' && p.created.length + p.updated.length + p.pruned.length + p.orphaned.length === 0;
  }).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}: ${JSON.stringify(await fileOf(c))}`);
  });
  const since = async () => (await q.tasks.recent(10_000)).filter((r) => !before.has(r.id));
  await waitFor(
    `${what}: converged`,
    async () => {
      await answer(c, planned);
      const f = await fileOf(c);
      const busy = (await since()).some((r) => r.status.state === 'pending' || r.status.state === 'running');
      return f?.converged === true && !busy && (await daemonsAsDeclared(q));
    },
    120_000,
  ).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}: ${JSON.stringify((await fileOf(c))?.blocking)}`);
  });
  const runs = (await since()).filter((r) => r.spec.attempt <= 1);
  const want = planned.tasks.map((x) => key(x.task, x.kind, x.id, x.name));
  const got = runs.map((r) => key(r.spec.taskName, r.spec.targetKind, r.spec.targetId, r.spec.targetName));
  // Said in words too: inside fast-check a failed assertion reaches the report as its message.
  const diff = { notRun: minus(want, got), notPlanned: minus(got, want) };
  if (diff.notRun.length + diff.notPlanned.length) t.log(`${what}: ${JSON.stringify(diff)}`);
  if (process.env.PLAN_APPLY_DEBUG)
    for (const n of await q.nodes())
      t.log(
        n.spec.hostname,
        JSON.stringify(n.spec.daemons),
        JSON.stringify(n.status.ceph),
        JSON.stringify(n.status.daemons),
        JSON.stringify(await fileOf(c)),
      );
  t.deepEqual(
    diff,
    { notRun: [], notPlanned: [] },
    `${what}: the runs started are the plan's (planned ${want.length}, started ${got.length})`,
  );
}

async function refused(t: ExecutionContext, q: SpecsLab, c: Client, text: string, what: string): Promise<void> {
  const planned = await plan(c, text);
  t.true(planned.errors.length > 0 && !planned.valid, `${what}: the plan refuses it`);
  const cluster = await q.store.get('Cluster', 'default');
  await q.put(FILE, text);
  await waitFor(`${what}: the apply refuses it`, async () => (await fileOf(c))?.state === 'failed');
  t.deepEqual((await q.store.get('Cluster', 'default'))?.spec, cluster?.spec, `${what}: nothing changed`);
}

async function sequence(t: ExecutionContext, picks: Array<[number, number]>): Promise<void> {
  const q = await specsLab(t, MACHINES);
  const nodes = await allActive(q, MACHINES);
  const disks = await q.store.list<DiskSpec, DiskStatusFields>(Kind.Disk);
  const eligible = (n: NodeDoc): DiskDoc[] =>
    disks
      .filter((x) => x.spec.nodeId === n.id && diskReasons(x, n).length === 0)
      .sort((a, b) => a.spec.serial.localeCompare(b.spec.serial));
  const ordered = MACS.map((mac) => nodes.find((n) => n.spec.macs.includes(mac))!);
  const d: Disks = {
    mon: ordered.map((n) => eligible(n)[0]!.spec.serial),
    spare: ordered.map((n) =>
      eligible(n)
        .slice(1)
        .map((x) => x.spec.serial),
    ),
  };
  const c = await q.admin();
  try {
    let m = start(d);
    await step(t, q, c, render(m, d), 'create');
    for (const p of picks) {
      // A kind of change first (grow, shrink, move, ...), then one of that kind: each kind is
      // as likely, however many ways the world offers to grow.
      const options = steps(m, d);
      const kinds = [...new Set(options.map((o) => o.what.split(':')[0]!))];
      const ofKind = options.filter((o) => o.what.startsWith(`${kinds[p[0] % kinds.length]!}:`));
      const s = ofKind[p[1] % ofKind.length]!;
      t.log(s.what);
      if ('refused' in s) await refused(t, q, c, s.refused, s.what);
      else {
        await step(t, q, c, render(s.next, d), s.what);
        m = s.next;
      }
    }
  } finally {
    await q.stop();
  }
}

test('plan-apply the dry run lists exactly the task runs the apply then starts, for generated sequences of changes', async (t) => {
  t.timeout(600_000);
  t.log(`PLAN_APPLY_SEED=${SEED}`);
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: STEPS, maxLength: STEPS }), async (picks) => {
      await sequence(t, picks).catch((err: unknown) => {
        t.log(`failed: ${(err as Error).message}`);
        throw err;
      });
    }),
    { seed: SEED, numRuns: RUNS, endOnFailure: true },
  );
  t.pass();
});
