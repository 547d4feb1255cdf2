// Enrollment's pure decisions, table-tested: who may proceed to a boot decision, who waits, who
// is refused and when a boot raises a credential conflict; the boot decision with a credential;
// the discovery token bucket; dnsmasq's lease lines; the node plan's approval states.
import test from 'ava';
import { decideBoot } from '../../src/fleet/boot-decision.js';
import { enrollmentVerdict, isApproved, type BootFacts, type CredentialView, type EnrollmentVerdict } from '../../src/fleet/enrollment.js';
import { DiscoveryGuard, takeToken } from '../../src/fleet/discovery-limits.js';
import { RateLimitedError } from '../../src/errors.js';
import { ManualClock } from '../../src/model/clock.js';
import { parseDnsmasqLeases } from '../../src/clients/dhcp.js';
import { labMachineAddress } from '../../src/sim/lab.js';
import { offeredNodeOperations } from '../../src/model/operations.js';
import { planNode, type NodeObserved } from '../../reconcilers/node/plan.js';
import { T0, node, nodeObserved, observation, report } from '../builders.js';

const LEASE = '10.0.0.5';
const OTHER = '127.0.0.1';
const facts = (over: Partial<BootFacts> = {}): BootFacts => ({
  address: LEASE,
  lease: LEASE,
  credential: null,
  imageAvailable: true,
  autoApproveDeclared: true,
  ...over,
});
const cred = (over: Partial<CredentialView>): CredentialView => ({
  state: 'pending',
  boundAddress: LEASE,
  claimedBy: null,
  expired: false,
  ...over,
});

const verdicts: Array<{
  title: string;
  n: ReturnType<typeof node>;
  f: Partial<BootFacts>;
  kind: EnrollmentVerdict['kind'];
  approve?: boolean;
}> = [
  { title: 'an unapproved node waits', n: node().unapproved(), f: {}, kind: 'unapproved' },
  { title: 'a legacy node that never reported waits', n: node().unapproved(true), f: {}, kind: 'unapproved' },
  {
    title: 'a legacy node whose agent reported is approved',
    n: node('active').unapproved(true),
    f: { credential: cred({ state: 'claimed', claimedBy: LEASE }) },
    kind: 'proceed',
    approve: false,
  },
  {
    title: 'a spec-declared node booting from its lease is approved on the way',
    n: node().unapproved().withSource('rack.yaml'),
    f: {},
    kind: 'proceed',
    approve: true,
  },
  {
    title: 'a spec-declared node booting from another address waits',
    n: node().unapproved().withSource('rack.yaml'),
    f: { address: OTHER },
    kind: 'unapproved',
  },
  {
    title: 'a spec-declared node without a lease book waits',
    n: node().unapproved().withSource('rack.yaml'),
    f: { lease: null, address: OTHER },
    kind: 'unapproved',
  },
  {
    title: 'a spec-declared node waits when auto-approval is off',
    n: node().unapproved().withSource('rack.yaml'),
    f: { autoApproveDeclared: false },
    kind: 'unapproved',
  },
  { title: 'an approved node booting from its lease proceeds', n: node(), f: {}, kind: 'proceed', approve: false },
  {
    title: 'an approved node without a lease book proceeds from any address',
    n: node(),
    f: { lease: null, address: OTHER },
    kind: 'proceed',
  },
  { title: 'an approved node asked for from another address than its lease is refused', n: node(), f: { address: OTHER }, kind: 'refused' },
  {
    title: 'a credential bound to another address refuses until it expires',
    n: node(),
    f: { lease: null, address: OTHER, credential: cred({}) },
    kind: 'refused',
  },
  {
    title: 'an expired credential bound elsewhere no longer refuses',
    n: node(),
    f: { lease: null, address: OTHER, credential: cred({ expired: true }) },
    kind: 'proceed',
  },
  {
    title: 'a credential claimed elsewhere is a conflict when the machine boots to install',
    n: node(),
    f: { credential: cred({ state: 'claimed', claimedBy: OTHER }) },
    kind: 'conflict',
  },
  {
    title: 'a claimed credential of a reporting node is a conflict only for a boot from its lease',
    n: node('active'),
    f: { lease: null, address: '10.9.9.9', credential: cred({ state: 'claimed', claimedBy: LEASE }) },
    kind: 'proceed',
  },
  {
    title: 'the same address as the claim is no conflict',
    n: node('active'),
    f: { credential: cred({ state: 'claimed', claimedBy: LEASE }) },
    kind: 'proceed',
  },
];

for (const v of verdicts) {
  test(`enrollment verdict: ${v.title}`, (t) => {
    const out = enrollmentVerdict(v.n.build(), facts(v.f));
    t.is(out.kind, v.kind);
    if (v.approve !== undefined && out.kind === 'proceed') t.is(out.approve, v.approve);
    if (out.kind !== 'proceed') t.false(/[;$`{}]/.test(out.reason), 'plain words for an iPXE echo line');
  });
}

test('enrollment approval of nodes without the field follows whether their agent reported', (t) => {
  t.false(isApproved(node().unapproved(true).build()));
  t.true(isApproved(node('active').unapproved(true).build()));
  t.false(isApproved(node('active').unapproved().build()), 'an explicit false wins over a report');
});

test('enrollment boot decision installs again a reported node whose credential was revoked or removed', (t) => {
  const installed = node('active').build();
  t.is(decideBoot(installed, true).action, 'local');
  t.is(decideBoot(installed, true, cred({ state: 'claimed' })).action, 'local');
  t.is(decideBoot(installed, true, null).action, 'install');
  t.is(decideBoot(installed, true, cred({ state: 'revoked' })).action, 'install');
  t.is(decideBoot(node().build(), false, null).action, 'wait');
});

test('enrollment offers an unapproved node only node.approve, and an approved one never', (t) => {
  t.deepEqual(offeredNodeOperations(node().unapproved().build(), []), ['node.approve']);
  t.deepEqual(offeredNodeOperations(node('error').unapproved().build(), []), ['node.approve']);
  t.false(offeredNodeOperations(node('active').build(), []).includes('node.approve'));
});

test('enrollment token bucket allows a burst, then refills at the rate', (t) => {
  let b = undefined as ReturnType<typeof takeToken>['bucket'] | undefined;
  for (let i = 0; i < 3; i++) {
    const r = takeToken(b, T0, 3, 6);
    t.true(r.ok);
    b = r.bucket;
  }
  const refused = takeToken(b, T0, 3, 6);
  t.false(refused.ok);
  t.is(refused.retryAfterMs, 10_000);
  t.false(takeToken(refused.bucket, T0 + 9_000, 3, 6).ok);
  t.true(takeToken(refused.bucket, T0 + 10_000, 3, 6).ok);
  t.false(takeToken({ tokens: 0, at: T0 }, T0 + 3_600_000, 3, 0).ok, 'a rate of 0 never refills');
});

test('enrollment reads dnsmasq lease lines and skips everything else', (t) => {
  const text = [
    '1767225600 52:54:00:AA:BB:01 10.251.7.100 vm1 01:52:54:00:aa:bb:01',
    '0 52:54:00:aa:bb:02 10.251.7.101 * *',
    'duid 00:01:00:01:2c:aa:bb:cc:52:54:00:aa:bb:01',
    '1767225600 1234 fd00::5 * 00:01',
    'garbage',
    '',
  ].join('\n');
  t.deepEqual(parseDnsmasqLeases(text), [
    { expires: 1767225600, mac: '52:54:00:aa:bb:01', address: '10.251.7.100' },
    { expires: 0, mac: '52:54:00:aa:bb:02', address: '10.251.7.101' },
  ]);
});

test('enrollment gives each lab machine its own loopback address, never 127.0.0.1', (t) => {
  const seen = new Set<string>();
  for (let i = 1; i <= 70_000; i += 7) {
    const a = labMachineAddress(i);
    t.regex(a, /^127\.(\d+)\.(\d+)\.(\d+)$/);
    t.false(/\.(0|255)(\.|$)/.test(a.slice(4)), a);
    seen.add(a);
  }
  t.is(seen.size, 10_000);
  t.not(labMachineAddress(1), '127.0.0.1');
});

function observed(over: Partial<NodeObserved>): NodeObserved {
  return nodeObserved(over, T0 + 3_600_000);
}

const plans: Array<{ title: string; input: Partial<NodeObserved>; phase: string; reason: string; forget?: boolean; announce?: boolean }> = [
  {
    title: 'an unapproved node is discovered, awaiting approval, and announced',
    input: { node: node().unapproved().build() },
    phase: 'discovered',
    reason: 'AwaitingApproval',
    announce: true,
  },
  {
    title: 'a credential conflict is an error',
    input: { node: node('active').unapproved().build(), credentialConflict: 'claimed from 127.0.0.1' },
    phase: 'error',
    reason: 'CredentialConflict',
    announce: false,
  },
  {
    title: 'an unapproved node unseen past the TTL is forgotten',
    input: { node: node().unapproved().build(), unapprovedTtlMs: 60_000, obs: observation({ seenAt: T0 }) },
    phase: 'discovered',
    reason: 'AwaitingApproval',
    forget: true,
  },
  {
    title: 'an unapproved node seen lately is kept',
    input: { node: node().unapproved().build(), unapprovedTtlMs: 60_000, obs: observation({ seenAt: T0 + 3_590_000 }) },
    phase: 'discovered',
    reason: 'AwaitingApproval',
    forget: false,
  },
  {
    title: 'a spec-declared unapproved node is never forgotten',
    input: { node: node().unapproved().withSource('rack.yaml').build(), unapprovedTtlMs: 60_000 },
    phase: 'discovered',
    reason: 'AwaitingApproval',
    forget: false,
  },
  {
    title: 'an approved node with a fresh report is active',
    input: { obs: observation({ lastReportAt: T0 + 3_599_000, report: report() }) },
    phase: 'active',
    reason: 'AgentReporting',
    forget: false,
    announce: false,
  },
];

for (const p of plans) {
  test(`enrollment node plan: ${p.title}`, (t) => {
    const plan = planNode(observed(p.input));
    t.is(plan.status.phase as string, p.phase);
    t.is(plan.status.conditions?.find((c) => c.type === 'Ready')?.reason, p.reason);
    if (p.forget !== undefined) t.is(plan.forget, p.forget);
    if (p.announce !== undefined) t.is(plan.announce, p.announce);
    const approved = plan.status.conditions?.find((c) => c.type === 'Approved');
    t.is(approved?.status, p.input.node?.spec.approved === false ? 'False' : 'True');
  });
}

test('enrollment discoveries made together cannot pass the unapproved cap on one count: each holds a place until released', (t) => {
  const guard = new DiscoveryGuard({ maxUnapproved: 3, burst: 100, perMinute: 100 }, new ManualClock(T0));
  // Two nodes wait; three requests made together all counted two before any committed.
  const first = guard.reserve(2);
  t.throws(() => guard.reserve(2), { instanceOf: RateLimitedError });
  first(); // the first one failed (or committed, after which the count says 3)
  first(); // releasing twice frees one place, not two
  const second = guard.reserve(2);
  t.throws(() => guard.reserve(2), { instanceOf: RateLimitedError });
  second();
  t.throws(() => guard.reserve(3), { instanceOf: RateLimitedError }, 'the stored count alone still caps');
});
