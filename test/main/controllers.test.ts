// Several controllers on one etcd (#18 parts 3, 4 and 6), as real processes: one leads; the
// leader's SIGKILL leaves boots and the API answering on the others, another leads and
// reconciles, and no acknowledged write is lost; an etcd member killed underneath changes
// nothing, even the one Raft leads; a stopped leader hands over without waiting out its lease. Times are logged (the
// failover bench measures them), never asserted.
import test from 'ava';
import { Client } from '../http/client.js';
import { EtcdCluster, etcdMissing } from '../store/etcd-server.js';
import { CONTROLLER_ADMIN_PASSWORD, ControllerGroup, type Controller } from './controllers.js';
import { waitFor } from '../helpers/wait.js';
import { increasing, openEventStream } from './event-stream.js';

const it = etcdMissing() ? test.skip : test.serial;
// Discovery limits out of the way: every boot of the traffic is a new machine.
const env = { MAX_UNAPPROVED_NODES: '10000', DISCOVERY_BURST: '10000', DISCOVERY_PER_MINUTE: '100000' };

const mac = (i: number): string =>
  `52:54:00:7e:${((i >> 8) & 0xff).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`;

/** Machines network-booting through the given controllers, round robin, one at a time: each
 * answer names the node the controller recorded (an acknowledged write). */
class BootTraffic {
  readonly acknowledged = new Map<string, { at: number; via: string }>();
  readonly failures: string[] = [];
  private n = 0;
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(private readonly via: () => Controller[]) {
    this.done = this.run();
  }

  get count(): number {
    return this.acknowledged.size;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const targets = this.via();
      const c = targets[this.n % targets.length]!;
      const i = this.n++;
      try {
        const res = await fetch(`${c.url}/boot/config?mac=${mac(i)}`, { signal: AbortSignal.timeout(10_000) });
        const body = await res.text();
        const id = /set quarry-node (\S+)/.exec(body)?.[1];
        if (res.status === 200 && id) this.acknowledged.set(id, { at: Date.now(), via: c.name });
        else this.failures.push(`${c.name} ${mac(i)}: ${res.status} ${body.slice(0, 300)}`);
      } catch (err) {
        this.failures.push(`${c.name} ${mac(i)}: ${String(err)}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

interface NodeDetail {
  id: string;
  ready: { reason?: string } | null;
}

/** Node ids the new leader has reconciled (its node loop wrote the approval condition). */
async function reconciled(c: Client): Promise<Set<string>> {
  const r = await c.get('/nodes/details');
  if (r.status !== 200) return new Set();
  return new Set((r.json as NodeDetail[]).filter((n) => n.ready?.reason === 'AwaitingApproval').map((n) => n.id));
}

it('three controllers on three etcd members: the leader SIGKILLed mid-traffic, boots go on, another leads and reconciles, nothing acknowledged is lost; then an etcd member dies underneath', async (t) => {
  const etcd = await EtcdCluster.start(3);
  t.teardown(() => etcd.stop());
  const g = await ControllerGroup.start(t, 3, { endpoints: etcd.endpoints(), prefix: 'quarry-ha/', env });
  const [first] = await waitFor('one leader', async () => {
    const l = await g.leaders();
    return l.length === 1 ? l : undefined;
  });
  const leader = first!;
  const followers = g.controllers.filter((c) => c !== leader);
  t.is((await g.leaders()).length, 1, 'exactly one leads');
  // An operator's session, made on a follower, works on every controller (one signing key, one
  // session store).
  const api = new Client(followers[0]!.url);
  t.is((await api.post('/user/login', { username: 'admin', password: CONTROLLER_ADMIN_PASSWORD })).status, 200);
  // An operator watching /events on the other follower: it streams the store's feed, so the
  // leader's death neither ends nor repeats it.
  const watching = await openEventStream(t, followers[1]!.url, CONTROLLER_ADMIN_PASSWORD);
  const boots = new BootTraffic(() => followers);
  t.teardown(() => boots.stop());
  await waitFor('boots before the kill', async () => boots.count >= 20 || undefined);
  const killedAt = Date.now();
  await leader.kill('SIGKILL');
  const bootsAtKill = boots.count;
  const [next] = await waitFor('a new leader', async () => {
    const l = await g.leaders();
    return l.length === 1 ? l : undefined;
  });
  const electedAt = Date.now();
  t.true(followers.includes(next!));
  // Reconciling: a machine that first booted after the kill gets its node's conditions from the
  // new leader's loop.
  const afterKill = await waitFor('a node booted after the kill, reconciled', async () => {
    const done = await reconciled(api);
    return [...boots.acknowledged].find(([id, b]) => b.at > killedAt && done.has(id));
  });
  t.log(
    `failover: leading ${electedAt - killedAt} ms after the SIGKILL; a node booted after it reconciled ${Date.now() - killedAt} ms after`,
  );
  t.log(`boots: ${bootsAtKill} before the kill, ${boots.count} by now; a node first seen via ${afterKill[1].via}`);
  await waitFor('the new leader says it leads', async () => next!.logged('elected: this controller leads').length === 1);
  await waitFor('events of the new leader on the stream', async () => watching.seen.some((e) => e.at > electedAt) || undefined);
  t.true(
    watching.seen.some((e) => e.at < killedAt),
    'events of the old leader came first',
  );
  t.true(increasing(watching.seen), 'the stream went on with growing ids, none repeated');
  t.deepEqual(watching.errors, [], 'the stream was never cut');

  // The etcd member Raft leads dies under the controllers (the worst member to lose: etcd
  // answers nothing while it elects another); boots, the leadership and the loops go on.
  const { raft } = await waitFor('the member Raft leads', async () => {
    const i = await etcd.raftLeader();
    return i === undefined ? undefined : { raft: i };
  });
  await etcd.kill(raft);
  const beforeMemberKill = boots.count;
  await waitFor('boots with a member down', async () => boots.count >= beforeMemberKill + 20 || undefined);
  await etcd.restart(raft);
  await boots.stop();

  t.deepEqual(boots.failures, [], 'every boot was answered');
  t.true(next!.running && (await next!.leads()), 'the leader kept leading through the etcd election');
  // Nothing acknowledged is lost, and every node converges under the new leader.
  let missing: string[] = [];
  const all = await waitFor('every acknowledged node reconciled', async () => {
    const done = await reconciled(api);
    missing = [...boots.acknowledged.keys()].filter((id) => !done.has(id));
    return missing.length === 0 ? done : undefined;
  }).catch(async (err: unknown) => {
    const details = ((await api.get('/nodes/details')).json as NodeDetail[]).filter((n) => missing.includes(n.id));
    const seen = missing.map((id) => ({ id, ...boots.acknowledged.get(id), killedAt, electedAt }));
    throw new Error(
      `${String(err)}: ${missing.length} missing, ${JSON.stringify(seen.slice(0, 2))} ${JSON.stringify(details.slice(0, 2))}`,
    );
  });
  t.true(all.size >= boots.acknowledged.size);
  t.is((await g.leaders()).length, 1, 'still exactly one leads');
  t.false(
    next!.lines.some((l) => l.includes('"level":"error"')),
    next!.lines.filter((l) => l.includes('"level":"error"')).join('\n'),
  );
});

it('two controllers: a leader stopped with SIGTERM resigns, and the other leads without waiting out the lease', async (t) => {
  const etcd = await EtcdCluster.start(1);
  t.teardown(() => etcd.stop());
  // A 30 s lease: the handover below cannot be its expiry.
  const g = await ControllerGroup.start(t, 2, {
    endpoints: etcd.endpoints(),
    prefix: 'quarry-ha/',
    env: { ...env, LEADER_LEASE_TTL_S: '30' },
  });
  const [leader] = await waitFor('one leader', async () => {
    const l = await g.leaders();
    return l.length === 1 ? l : undefined;
  });
  const other = g.controllers.find((c) => c !== leader)!;
  const stoppedAt = Date.now();
  t.is(await leader!.kill('SIGTERM'), 0, 'a clean stop');
  await waitFor('the other leads', async () => (await other.leads()) || undefined, 25_000);
  t.log(`handover after SIGTERM: ${Date.now() - stoppedAt} ms`);
  await waitFor('it says it leads', async () => other.logged('elected: this controller leads').length === 1);
  t.pass();
});
