// The service behind the /s3 routes: which RADOS gateway serves a request, and one S3 session
// with it in the caller's name. A gateway qualifies when its node wants it, the node's agent
// reports it running, and the node has an address and is not offline. Gateways are tried in
// turn, starting with a different one each time; one that does not answer (503) hands the
// request to the next, since every operation here can be repeated without harm. A gateway's
// address is one the master observed (its agent's connection), never the agent's own word.
import { isIP } from 'node:net';
import { ServiceUnavailableError } from '../errors.js';
import { Kind, NodeStatus, type NodeSpec, type NodeStatusFields } from '../model/kinds.js';
import type { NodeDoc } from '../model/operations.js';
import { RGW_PORT } from '../model/storage-kinds.js';
import type { GatewayAddress, S3Connect, S3Credentials, S3Session } from '../model/s3.js';
import type { Store } from '../store/types.js';

export interface S3ServiceDeps {
  store: Store;
  connect: S3Connect;
  /** The address the master itself observed for a node (its agent's connection), a valid IP or
   * null. Where a caller's signed requests go must not be a string an agent wrote: the
   * composition root passes the fleet's observation. Without it (tests of the routes alone),
   * the node's status address, used only when it is a valid IP. */
  addressOf?: (nodeId: string) => string | null;
  /** Where a gateway's S3 answers: `http://<ip>:<port>` on a real network; the lab maps it. */
  endpointOf?: (gw: GatewayAddress) => Promise<string> | string;
}

/** `http://<ip>:<port>`, built with the URL API from a validated IP and the master's port: no
 * path, user or query can come in with the address. */
export function gatewayUrl(gw: GatewayAddress): string {
  const family = isIP(gw.ip);
  if (family === 0 || !Number.isInteger(gw.port) || gw.port < 1 || gw.port > 65535) {
    throw new ServiceUnavailableError(`the RADOS gateway on ${gw.hostname} has no usable address`, 'CLUSTER_UNAVAILABLE');
  }
  const u = new URL('http://gateway.invalid');
  u.hostname = family === 6 ? `[${gw.ip}]` : gw.ip;
  u.port = String(gw.port);
  return u.origin;
}

const serving = (n: NodeDoc): boolean =>
  n.spec.daemons.rgw !== undefined && n.status.daemons?.rgw === true && n.status.phase !== NodeStatus.offline;

export class S3Service {
  private next = 0;
  private readonly endpointOf: (gw: GatewayAddress) => Promise<string> | string;

  constructor(private readonly deps: S3ServiceDeps) {
    this.endpointOf = deps.endpointOf ?? gatewayUrl;
  }

  /** The gateways that may serve S3 now, by hostname. */
  async gateways(): Promise<GatewayAddress[]> {
    const nodes = await this.deps.store.list<NodeSpec, NodeStatusFields>(Kind.Node);
    const out: GatewayAddress[] = [];
    for (const n of nodes.filter(serving)) {
      const ip = this.deps.addressOf ? this.deps.addressOf(n.id) : (n.status.ip ?? null);
      if (ip && isIP(ip) !== 0) out.push({ hostname: n.spec.hostname, ip, port: RGW_PORT });
    }
    return out.sort((a, b) => a.hostname.localeCompare(b.hostname));
  }

  /** Runs `op` against a gateway in the caller's name: 503 when none is running or none answers. */
  async with<T>(credentials: S3Credentials, op: (s: S3Session) => Promise<T>): Promise<T> {
    const all = await this.gateways();
    if (all.length === 0) {
      throw new ServiceUnavailableError(
        'no RADOS gateway is running: deploy one (POST /gateways/rgw/deploy) and wait for it to run',
        'CLUSTER_UNAVAILABLE',
      );
    }
    const start = this.next++ % all.length;
    for (let i = 0; i < all.length; i++) {
      const gw = all[(start + i) % all.length] as GatewayAddress;
      try {
        return await op(this.deps.connect(await this.endpointOf(gw), credentials));
      } catch (err) {
        if (!(err instanceof ServiceUnavailableError)) throw err;
      }
    }
    // Not the gateways' own words: they name their addresses, and a 5xx shows no internals.
    throw new ServiceUnavailableError('no running RADOS gateway answered; try again later', 'CLUSTER_UNAVAILABLE');
  }
}
