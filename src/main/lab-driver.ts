// Everything DRIVER=lab gives the wiring: the simulated Ceph cluster and its API seams, the
// simulated master (interfaces and DHCP), the built-in image registry, the S3 gateways' loopback
// listeners and the Lab of machines itself. The root loads this module with `await import()`
// only when DRIVER=lab, so a real start never loads src/sim (test/main/driver-imports.test.ts).
import type { Store } from '../store/types.js';
import type { MasterLink } from '../fleet/protocol.js';
import type { CephApi, RgwApi } from '../clients/ceph-api.js';
import { getKey } from '../../reconcilers/shared/keys.js';
import { SimCephApi, SimRgwApi } from '../sim/ceph/api.js';
import { SimCephCluster } from '../sim/ceph/cluster.js';
import { LabImageRegistry } from '../sim/image-registry.js';
import { SimMaster } from '../sim/master.js';
import { seeded } from '../sim/random.js';
import { LabS3Gateways } from '../sim/s3/gateway.js';
import { Lab, type LabOptions } from '../sim/lab.js';
import { SimBmcs } from '../sim/bmc.js';

export interface LabDriver {
  /** The simulated cluster: the master's loops reach it before the machines exist. */
  cluster: SimCephCluster;
  /** The Ceph and RGW seams over the simulated cluster. */
  ceph(store: Store): { ceph: CephApi; rgw: RgwApi };
  master(dir: string, now: () => number): SimMaster;
  /** A function property, not a method: main passes it on unbound (startImages' labRegistry). */
  imageRegistry: () => LabImageRegistry;
  s3Gateways(): LabS3Gateways;
  lab(master: MasterLink, opts: LabOptions): Lab;
  /** The machines' BMCs: the node loop reaches them before the machines exist. */
  bmcs: SimBmcs;
}

/** `given`: a cluster that outlives this Quarry (a test restarting Quarry over the same lab Ceph). */
export function labDriver(seed: number, given?: SimCephCluster): LabDriver {
  const cluster = given ?? new SimCephCluster({ random: seeded(seed + 2) });
  const bmcs = new SimBmcs();
  return {
    bmcs,
    cluster,
    // The master shows the client.admin key Quarry keeps, as the real CLI does with its keyring
    // file, so the simulated cephx refuses it until that key is in the cluster
    // (reconcilers/mon/admin-key.ts).
    ceph(store) {
      const keyOf = async (entity: string): Promise<string | undefined> => (await getKey(store, entity))?.status.key;
      return { ceph: new SimCephApi(cluster, { keyOf }), rgw: new SimRgwApi(cluster, { keyOf }) };
    },
    master: (dir, now) => new SimMaster(dir, now),
    imageRegistry: () => new LabImageRegistry(),
    s3Gateways: () => new LabS3Gateways(cluster),
    lab: (master, opts) => new Lab(master, { ...opts, ceph: opts.ceph ?? cluster, bmcs: opts.bmcs ?? bmcs }),
  };
}
