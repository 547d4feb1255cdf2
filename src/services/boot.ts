// Network boot: iPXE asks GET /boot/default (or DHCP sends it straight to /boot/config) and
// gets a script decided by the machine's desired state, rendered from the ipxe-default and
// ipxe-boot templates (the routes are in http/routes/boot.ts). Public, as machines have no
// credentials yet, so /boot/config enrolls
// (src/fleet/enrollment.ts): an unknown MAC becomes an unapproved `discovered` node (rate-limited
// per address, capped in number) that is told to wait until approved; only an approved node
// booting from the right address may install, and only then is its install credential issued,
// bound to that address. The answer is rendered first with a tentative node and committed after:
// a failing render (422) creates no node, no credential and counts no boot.
import type { AgentCredentials } from '../fleet/credentials.js';
import { commitNode, findNodeByMac, normaliseMac, tentativeNode } from '../fleet/discovery.js';
import { decideBoot, type BootDecision } from '../fleet/boot-decision.js';
import type { DiscoveryGuard } from '../fleet/discovery-limits.js';
import { enrollmentVerdict, isApproved, type EnrollmentVerdict } from '../fleet/enrollment.js';
import type { Fleet } from '../fleet/fleet.js';
import type { Clock } from '../model/clock.js';
import { nodeIdForMac } from '../model/ids.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../model/kinds.js';
import type { Store } from '../store/types.js';
import type { NodeDoc, TemplateContexts } from './template-context.js';
import type { TemplateLibrary } from './templates.js';

export interface EnrollmentOptions {
  /** MAC → the address a DHCP server Quarry runs leased it (dnsmasq's lease files, the lab's). */
  leases: { leaseFor(mac: string): Promise<string | null> };
  guard: DiscoveryGuard;
  /** A spec naming the MAC plus a boot from its lease approves the node (AUTO_APPROVE_DECLARED). */
  autoApproveDeclared: boolean;
  /** How long an unapproved (or refused) machine sleeps before it asks again. */
  retrySeconds: number;
}

export interface BootDeps {
  store: Store;
  fleet: Fleet;
  clock: Clock;
  credentials: Pick<AgentCredentials, 'issue' | 'view' | 'conflict'>;
  library: TemplateLibrary;
  contexts: TemplateContexts;
  enrollment: EnrollmentOptions;
}

/** The iPXE script for the machine with this MAC asking from `address`; `base` is the URL the
 * machine reached Quarry on. An unknown MAC is enrolled as a discovered node (see above). */
export async function bootConfig(deps: BootDeps, request: { mac: string; address: string; base: string }): Promise<string> {
  const { store, enrollment: e } = deps;
  const { base, address } = request;
  const mac = normaliseMac(request.mac);
  let existing = await store.get<NodeSpec, NodeStatusFields>(Kind.Node, nodeIdForMac(mac));
  let release = (): void => undefined;
  if (!existing) {
    // Charged before the slow search by the MAC's other NICs, refunded when it finds the node.
    e.guard.take(address);
    existing = await findNodeByMac(store, mac);
    if (existing) e.guard.refund(address);
    else release = e.guard.reserve(await countUnapproved(store));
  }
  try {
    return await answerBoot(deps, { mac, address, base, existing });
  } finally {
    release();
  }
}

async function answerBoot(
  deps: BootDeps,
  r: { mac: string; address: string; base: string; existing: NodeDoc | undefined },
): Promise<string> {
  const { store, fleet, credentials, contexts, enrollment: e } = deps;
  const { mac, address, base, existing } = r;
  const node = existing ?? tentativeNode(mac, deps.clock.iso());
  const [lease, credential, imageAvailable] = await Promise.all([
    e.leases.leaseFor(mac),
    existing ? credentials.view(node.id) : Promise.resolve(null),
    contexts.imageAvailable(node),
  ]);
  const verdict = enrollmentVerdict(node, { address, lease, credential, imageAvailable, autoApproveDeclared: e.autoApproveDeclared });
  const boot = decision(node, verdict, imageAvailable, credential, e.retrySeconds);
  // Rendered before anything is written: a broken ipxe-boot template changes nothing.
  const script = await deps.library.render('ipxe-boot', await contexts.full(node, base, { boot, secret: false }));
  if (!existing) await commitNode(store, node);
  if (verdict.kind === 'conflict') await credentials.conflict(node.id, `${verdict.reason}; this boot request came from ${address}`);
  if (verdict.kind === 'proceed' && verdict.approve) {
    await store.mutateSpec<NodeSpec>(Kind.Node, node.id, (d) => (d.spec.approved === true ? undefined : { ...d.spec, approved: true }));
  }
  if (boot.action === 'install') await credentials.issue(node.id, address);
  // A machine told to wait asks again on its own: that is polling, not a boot to count.
  // Only an unapproved node's address is noted from anywhere (the admin judges it); an approved
  // node's only from requests that may speak for it.
  if (verdict.kind === 'proceed' && boot.action !== 'wait') fleet.recordBoot(node.id, 'pxe', address);
  else fleet.seen(node.id, verdict.kind === 'unapproved' ? address : undefined);
  return script;
}

function decision(
  node: NodeDoc,
  v: EnrollmentVerdict,
  imageAvailable: boolean,
  credential: Awaited<ReturnType<AgentCredentials['view']>>,
  retrySeconds: number,
): BootDecision {
  switch (v.kind) {
    case 'proceed':
      return decideBoot(v.approve ? { ...node, spec: { ...node.spec, approved: true } } : node, imageAvailable, credential);
    case 'conflict':
      return { action: 'wait', reason: `${v.reason}: waiting for an admin to approve the node again`, retrySeconds };
    case 'refused':
    case 'unapproved':
      return { action: 'wait', reason: v.reason, retrySeconds };
  }
}

async function countUnapproved(store: Store): Promise<number> {
  const nodes = await store.list<NodeSpec, NodeStatusFields>(Kind.Node);
  return nodes.reduce((n, d) => (isApproved(d) ? n : n + 1), 0);
}
