// What templates see. Built from desired state and a few observed facts, never from secret
// kinds: no keyring, RGW key, password hash or session/JWT material is ever read here, so no
// template, however written, can put one into an answer. The one secret a node-specific
// render may carry is the node's install secret: only for an approved node being installed,
// only to a request from the address the credential is bound to (its boot request's, the DHCP
// lease where Quarry knows it), within its TTL and until its first use (fleet/credentials.ts).
// A render never creates a credential: GET /boot/config issues it, after its own render.
import { NotFoundError } from '../errors.js';
import type { Doc } from '../model/document.js';
import { CLUSTER_ID, CephKind, type ClusterSpec } from '../model/ceph-kinds.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../model/kinds.js';
import type { Store } from '../store/types.js';
import { agentUsername } from '../fleet/credentials.js';
import { decideBoot, type BootDecision } from '../fleet/boot-decision.js';
import { isApproved } from '../fleet/enrollment.js';
import { findNodeByMac, normaliseMac } from '../fleet/discovery.js';

export type NodeDoc = Doc<NodeSpec, NodeStatusFields>;

/** An OS image a node can install: its kernel and initrd by file name. */
export interface BootImage {
  id: string;
  name: string;
  kernel: string;
  initrd: string;
  /** Extra kernel arguments of the image. */
  cmdline: string;
}

/** The network and image areas' answers, injected: the composition root wires the real ones. */
export interface ProvisioningSources {
  /** The DHCP network the node boots on, as templates may use it; null when none is known. */
  networkFor(node: NodeDoc): Promise<Record<string, unknown> | null>;
  /** The node's image, or the default one; null when no image is available. */
  bootImageFor(node: NodeDoc): Promise<BootImage | null>;
  /** The path (from Quarry's base URL) a machine downloads an image file from. */
  imageFileUrl(imageId: string, file: string): string;
}

export const CONTEXT_KINDS = ['node', 'network', 'image', 'cluster', 'master'] as const;
export type ContextKind = (typeof CONTEXT_KINDS)[number];

export interface AgentSecrets {
  /** The install secret for a render asked from `address`, or null (fleet/credentials.ts). */
  installSecret(nodeId: string, address: string | null): Promise<string | null>;
}

/** What the caller knows of the request: the boot route brings its decision (enrollment and
 * all), a public render its source address. */
export interface RenderRequest {
  boot?: BootDecision;
  /** The request's source address; null or absent: no install secret is shown. */
  address?: string | null;
  /** False: the agent section carries no secret whatever the decision (the iPXE script). */
  secret?: boolean;
  /** Seconds a machine told to wait sleeps; 30 when absent. */
  retrySeconds?: number;
}

export class TemplateContexts {
  private readonly specific = new Map<string, () => Promise<object>>();

  constructor(
    private readonly store: Store,
    private readonly sources: ProvisioningSources,
    private readonly agents: AgentSecrets,
  ) {}

  /** A template whose own user renders it with more (ceph.conf's monitors): the public render
   * of that template gets the same. */
  provide(templateName: string, context: () => Promise<object>): void {
    this.specific.set(templateName, context);
  }

  /** What a render of `templateName` sees. */
  async forTemplate(templateName: string, node: NodeDoc | null, base: string, req: RenderRequest = {}): Promise<Record<string, unknown>> {
    const ctx = await this.full(node, base, req);
    const extra = this.specific.get(templateName);
    return extra ? { ...ctx, ...(await extra()) } : ctx;
  }

  async nodeByRef(ref: { mac?: string; nodeId?: string }): Promise<NodeDoc | null> {
    if (ref.nodeId) {
      const n = await this.store.get<NodeSpec, NodeStatusFields>(Kind.Node, ref.nodeId);
      if (!n) throw new NotFoundError(`no node ${ref.nodeId}`);
      return n;
    }
    if (ref.mac) {
      const n = await findNodeByMac(this.store, normaliseMac(ref.mac));
      if (!n) throw new NotFoundError(`no node has MAC ${normaliseMac(ref.mac)}`);
      return n;
    }
    return null;
  }

  async imageAvailable(node: NodeDoc): Promise<boolean> {
    return (await this.sources.bootImageFor(node)) !== null;
  }

  async decide(node: NodeDoc): Promise<BootDecision> {
    if (!isApproved(node)) return { action: 'wait', reason: 'waiting for approval by an admin' };
    return decideBoot(node, (await this.sources.bootImageFor(node)) !== null);
  }

  /** The requested kinds for a node, keyed by kind (POST /templates/context). */
  async preview(node: NodeDoc, kinds: readonly ContextKind[], base: string): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const k of new Set(kinds)) out[k] = await this.kind(k, node, base);
    return out;
  }

  /** Everything a render sees: every kind, the boot decision, and the agent's install
   * credential when the decision is to install. Without a node only cluster and master. */
  async full(node: NodeDoc | null, base: string, req: RenderRequest = {}): Promise<Record<string, unknown>> {
    const ctx: Record<string, unknown> = { node: null, network: null, image: null, boot: null, agent: null };
    ctx.cluster = await this.kind('cluster', node, base);
    ctx.master = await this.kind('master', node, base);
    if (!node) return ctx;
    for (const k of ['node', 'network', 'image'] as const) ctx[k] = await this.kind(k, node, base);
    const boot = req.boot ?? (await this.decide(node));
    ctx.boot = { ...boot, retrySeconds: boot.retrySeconds ?? req.retrySeconds ?? 30 };
    if (boot.action === 'install') {
      // To anyone but the bound address the agent section is null: no username, no secret.
      const secret = req.secret === false || !req.address ? null : await this.agents.installSecret(node.id, req.address);
      if (secret !== null) ctx.agent = { username: agentUsername(node.id), secret, masterUrl: base };
    }
    return ctx;
  }

  private async kind(k: ContextKind, node: NodeDoc | null, base: string): Promise<unknown> {
    switch (k) {
      case 'master':
        return { url: base, bootConfigUrl: `${base}/boot/config` };
      case 'cluster': {
        const c = await this.store.get<ClusterSpec>(CephKind.Cluster, CLUSTER_ID);
        if (!c) return null;
        const { fsid, publicNetwork, clusterNetwork, monPort } = c.spec;
        return { fsid, publicNetwork, clusterNetwork, monPort };
      }
      case 'node':
        return node && nodeView(node);
      case 'network':
        return node && this.sources.networkFor(node);
      case 'image': {
        const img = node && (await this.sources.bootImageFor(node));
        if (!img) return null;
        const url = (file: string) => `${base}${this.sources.imageFileUrl(img.id, file)}`;
        return {
          id: img.id,
          name: img.name,
          kernelUrl: url(img.kernel),
          initrdUrl: url(img.initrd),
          initrdName: img.initrd,
          cmdline: img.cmdline,
        };
      }
    }
  }
}

function nodeView(n: NodeDoc) {
  return {
    id: n.id,
    hostname: n.spec.hostname,
    role: n.spec.role,
    mac: n.spec.macs[0] ?? '',
    macs: [...n.spec.macs],
    image: n.spec.image,
    ip: n.status.ip ?? '',
    status: n.status.phase ?? 'discovered',
  };
}
