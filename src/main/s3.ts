// The composition root's S3 part: the /s3 routes over the AWS SDK client, talking to a running
// RADOS gateway at `http://<node ip>:7480`; in the lab, the simulated gateways' loopback
// listeners (from lab-driver.ts) stand in for those addresses, and everything else is the same code.
import { connectS3 } from '../clients/s3.js';
import { S3Service, gatewayUrl } from '../services/s3.js';
import { s3Routes } from '../http/router.js';
import type { AnyRoute } from '../http/route.js';
import type { Store } from '../store/types.js';
import type { Fleet } from '../fleet/fleet.js';
import type { LabS3Gateways } from '../sim/s3/gateway.js';

export interface S3Part {
  routes: AnyRoute[];
  service: S3Service;
  /** The lab's gateways, with DRIVER=lab. */
  lab: LabS3Gateways | null;
  stop(): Promise<void>;
}

/** The lab's gateways: in this process (`local`, which tests look into), or only their
 * addresses, asked of a lab process (LAB_URL). */
export interface LabGateways {
  local: LabS3Gateways | null;
  endpoints: Pick<LabS3Gateways, 'url' | 'stop'>;
}

export function s3Part(deps: { store: Store; lab: LabGateways | null; fleet?: Fleet }): S3Part {
  const lab = deps.lab?.endpoints ?? null;
  const service = new S3Service({
    store: deps.store,
    connect: connectS3(),
    // Where a gateway is: the source address of its agent's last report, as the master saw it.
    ...(deps.fleet ? { addressOf: (nodeId: string) => deps.fleet!.observe(nodeId).address ?? null } : {}),
    endpointOf: lab ? (gw) => lab.url(gw.hostname) : gatewayUrl,
  });
  return { routes: s3Routes(service), service, lab: deps.lab?.local ?? null, stop: () => lab?.stop() ?? Promise.resolve() };
}
