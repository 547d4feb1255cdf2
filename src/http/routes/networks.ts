// DHCP networks and the master's interfaces they bind to. Creating one writes desired state
// only; the network loop starts its dnsmasq.
import { networkInputSchema } from '../../model/network-input.js';
import type { NetworkDoc, NetworkInput, Networks } from '../../services/networks.js';
import { route, type AnyRoute } from '../route.js';
import { conditionView, object, statusSchema, uuidSchema } from '../schemas.js';

const str = { type: 'string' };
const networkView = object(
  {
    id: uuidSchema,
    cidr: str,
    gateway: str,
    dnsServers: { type: 'array', items: str },
    rangeStart: str,
    rangeEnd: str,
    nicId: uuidSchema,
    status: object(
      {
        phase: { enum: ['pending', 'starting', 'running', 'degraded'] },
        pid: { type: ['integer', 'null'], description: 'the dnsmasq serving the network' },
        configHash: { type: ['string', 'null'], description: 'SHA-256 of the configuration it runs' },
        nicName: str,
        bootUrl: { type: 'string', description: 'where iPXE clients are sent' },
        conditions: { type: 'array', items: conditionView },
      },
      ['phase', 'pid', 'configHash', 'conditions'],
    ),
  },
  ['id', 'cidr', 'gateway', 'dnsServers', 'rangeStart', 'rangeEnd', 'nicId', 'status'],
);
const nicView = object(
  {
    id: { ...uuidSchema, description: 'stable: derived from the MAC' },
    name: str,
    mac: str,
    ip: { type: 'string', description: "first IPv4 address, '' when none" },
    connected: { type: 'boolean' },
    mtu: { type: 'integer' },
  },
  ['id', 'name', 'mac', 'ip', 'connected', 'mtu'],
);

const view = (n: NetworkDoc) => ({
  id: n.id,
  ...n.spec,
  status: {
    phase: n.status.phase ?? 'pending',
    pid: n.status.pid ?? null,
    configHash: n.status.configHash ?? null,
    ...(n.status.nicName !== undefined ? { nicName: n.status.nicName } : {}),
    ...(n.status.bootUrl !== undefined ? { bootUrl: n.status.bootUrl } : {}),
    conditions: n.status.conditions ?? [],
  },
});

export function networkRoutes(networks: Networks): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/networks',
      tags: ['networks'],
      summary: 'The DHCP networks, each with what the network loop last saw of its dnsmasq',
      response: { description: 'networks by CIDR', schema: { type: 'array', items: networkView } },
      handler: async () => (await networks.list()).sort((a, b) => a.spec.cidr.localeCompare(b.spec.cidr)).map(view),
    }),
    route<NetworkInput>({
      method: 'POST',
      path: '/networks/create',
      // The master's interfaces are the leader's: its network loop runs dnsmasq on them, and a
      // network is checked against the interfaces it has.
      leader: true,
      tags: ['networks'],
      admin: true,
      summary: `Declare a DHCP network on an interface of the master; the network loop serves it with dnsmasq (the same declaration again answers the same id)`,
      body: networkInputSchema,
      response: { description: 'created', schema: statusSchema('created', true) },
      errors: [404, 409],
      handler: async ({ body }) => ({ status: 'created', id: await networks.create(body) }),
    }),
    route({
      method: 'GET',
      path: '/networks/interfaces',
      // The leader's interfaces, as for /networks/create.
      leader: true,
      tags: ['networks'],
      summary: `The master's interfaces a network can bind to (Ethernet links; loopback excluded)`,
      response: { description: 'interfaces by name', schema: { type: 'array', items: nicView } },
      handler: async () =>
        (await networks.interfaces())
          .sort((a, b) => a.name.localeCompare(b.name))
          .map(({ id, name, mac, ip, connected, mtu }) => ({ id, name, mac, ip, connected, mtu })),
    }),
  ];
}
