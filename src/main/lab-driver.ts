// Everything DRIVER=lab gives the wiring: the simulated Ceph cluster and its API seams, the
// simulated master (interfaces and DHCP), the built-in image registry, the S3 gateways' loopback
// listeners and the Lab of machines itself. The root loads this module with `await import()`
// only when DRIVER=lab, so a real start never loads src/sim (test/main/driver-imports.test.ts).
//
// With LAB_URL the lab runs in its own process (src/sim/serve.ts), shared by every controller
// and surviving any one's death: Ceph, the BMCs and the S3 gateways are reached there over
// loopback HTTP (src/sim/remote-lab.ts), and its machines are its own (no Lab here).
import type { Store } from '../store/types.js';
import type { MasterLink } from '../fleet/protocol.js';
import type { CephApi, RgwApi } from '../clients/ceph-api.js';
import type { BmcApi } from '../clients/bmc.js';
import type { LabGateways } from './s3.js';
import { CephClient } from '../clients/ceph.js';
import { RgwAdmin } from '../clients/rgw-admin.js';
import { getKey } from '../../reconcilers/shared/keys.js';
import { SimCephApi, SimRgwApi } from '../sim/ceph/api.js';
import { SimCephCluster } from '../sim/ceph/cluster.js';
import { LabImageRegistry } from '../sim/image-registry.js';
import { SimMaster } from '../sim/master.js';
import { seeded } from '../sim/random.js';
import { LabS3Gateways } from '../sim/s3/gateway.js';
import { Lab, type LabOptions } from '../sim/lab.js';
import { SimBmcs } from '../sim/bmc.js';
import { RemoteBmcs, RemoteCephRunner, RemoteS3Gateways } from '../sim/remote-lab.js';

export interface LabDriver {
  /** The simulated cluster: the master's loops reach it before the machines exist. Null when
   * the lab is another process's. */
  cluster: SimCephCluster | null;
  /** The Ceph and RGW seams over the simulated cluster. */
  ceph(store: Store): { ceph: CephApi; rgw: RgwApi };
  master(dir: string, now: () => number): SimMaster;
  /** A function property, not a method: main passes it on unbound (startImages' labRegistry). */
  imageRegistry: () => LabImageRegistry;
  s3Gateways(): LabGateways;
  /** The machines, in this process; null when the lab is another process's. */
  lab(master: MasterLink, opts: LabOptions): Lab | null;
  /** The machines' BMCs: the node loop reaches them before the machines exist. */
  bmcs: BmcApi;
}

/** The conf path the master's Ceph clients pass (-c); the lab ignores it. */
const CONF = '/etc/ceph/ceph.conf';

// The master shows the client.admin key Quarry keeps, as the real CLI does with its keyring
// file, so the simulated cephx refuses it until that key is in the cluster
// (reconcilers/mon/admin-key.ts).
const keyFrom =
  (store: Store) =>
  async (entity: string): Promise<string | undefined> =>
    (await getKey(store, entity))?.status.key;

/** `given`: a cluster that outlives this Quarry (a test restarting Quarry over the same lab
 * Ceph). `remote`: the URL of a lab process (LAB_URL) instead of a lab in this one. */
export function labDriver(seed: number, given?: SimCephCluster, remote?: string | null): LabDriver {
  if (remote) return remoteLab(remote);
  const cluster = given ?? new SimCephCluster({ random: seeded(seed + 2) });
  const bmcs = new SimBmcs();
  return {
    bmcs,
    cluster,
    ceph(store) {
      const keyOf = keyFrom(store);
      return { ceph: new SimCephApi(cluster, { keyOf }), rgw: new SimRgwApi(cluster, { keyOf }) };
    },
    master: (dir, now) => new SimMaster(dir, now),
    imageRegistry: () => new LabImageRegistry(),
    s3Gateways: () => {
      const local = new LabS3Gateways(cluster);
      return { local, endpoints: local };
    },
    lab: (master, opts) => new Lab(master, { ...opts, ceph: opts.ceph ?? cluster, bmcs: opts.bmcs ?? bmcs }),
  };
}

/** A lab in its own process: the same clients as with the in-process lab, over its Runner. */
function remoteLab(url: string): LabDriver {
  return {
    bmcs: new RemoteBmcs(url),
    cluster: null,
    ceph(store) {
      const runner = new RemoteCephRunner(url, keyFrom(store));
      const opts = { runner, conf: CONF, name: 'client.admin' };
      return { ceph: bound(new CephClient(opts)), rgw: bound(new RgwAdmin(opts)) };
    },
    // The master's own machine (its NICs, its DHCP) is each controller's.
    master: (dir, now) => new SimMaster(dir, now),
    imageRegistry: () => new LabImageRegistry(),
    s3Gateways: () => ({ local: null, endpoints: new RemoteS3Gateways(url) }),
    lab: () => null,
  };
}

/** The client with its methods bound, as the API seams are used: loops pass a method on
 * unbound (`ceph.osdSetGroup`), and some of the clients' methods read `this`. */
function bound<T extends object>(client: T): T {
  const proto = Object.getPrototypeOf(client) as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(proto)) {
    const fn = proto[name];
    if (name !== 'constructor' && typeof fn === 'function') Object.defineProperty(client, name, { value: fn.bind(client) });
  }
  return client;
}
