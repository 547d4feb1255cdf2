// What an operator does through the API before a machine can network-boot, shared by the real
// network-boot tests (netboot, power): log in, download the image and make it the default, and
// serve a DHCP network on the test's own interface (never one the test did not create).
import type { ExecutionContext } from 'ava';
import type { Quarry } from '../../src/main.js';
import { NetworkKind, type NetworkSpec, type NetworkStatus } from '../../src/model/network-kinds.js';
import type { Created } from '../http/bodies.js';
import { Client } from '../http/client.js';
import { waitFor } from '../lab/harness.js';

export interface BootNetwork {
  password: string;
  imageId: string;
  /** The test's veth end on the master's side, as /networks/interfaces names it. */
  hostEnd: string;
  /** The master's address on it, `A.B.C.1`: the network is A.B.C.0/24, leases .100–.150. */
  masterIp: string;
}

/** Returns the admin's client and the network's id, once dnsmasq serves it. */
export async function serveBootNetwork(t: ExecutionContext, q: Quarry, o: BootNetwork): Promise<{ api: Client; networkId: string }> {
  const api = new Client(q.url);
  t.is((await api.post('/user/login', { username: 'admin', password: o.password })).status, 200);
  t.is((await api.get(`/images/${o.imageId.slice(0, 8)}/download`)).status, 200);
  await waitFor('image downloaded', async () => ((await api.get('/images/downloaded')).json as unknown[]).length === 1, 60_000);
  t.is((await api.post(`/images/${o.imageId}/default`)).status, 200);
  const nic = ((await api.get('/networks/interfaces')).json as Array<{ id: string; name: string }>).find((n) => n.name === o.hostEnd);
  t.truthy(nic, 'the test interface is listed');
  const base = o.masterIp.replace(/\.1$/, '');
  const created = await api.post<Created>('/networks/create', {
    cidr: `${base}.0/24`,
    gateway: o.masterIp,
    dnsServers: [o.masterIp],
    rangeStart: `${base}.100`,
    rangeEnd: `${base}.150`,
    nicId: nic!.id,
  });
  t.is(created.status, 200, created.text);
  await waitFor(
    'dnsmasq serving',
    async () => (await q.store.mustGet<NetworkSpec, NetworkStatus>(NetworkKind.Network, created.json.id)).status.phase === 'running',
    60_000,
  );
  return { api, networkId: created.json.id };
}
