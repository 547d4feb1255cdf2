// A node's power control: its BMC (IPMI over LAN) and fencing. Admins write; the password is
// write-only (answers say `passwordSet`).
import { bmcAddressSchema, bmcPasswordSchema, bmcPortSchema, bmcUsernameSchema } from '../../model/schemas.js';
import type { BmcInput, NodePower } from '../../services/node-power.js';
import { route, type AnyRoute } from '../route.js';
import { object, statusSchema, uuidSchema } from '../schemas.js';

const fencing = {
  enum: ['none', 'bmc'],
  description: '`bmc`: a hung node may be power-cycled through its BMC, inside the disruption budget (default none)',
};
const bmcViewSchema = object(
  { address: { type: 'string' }, port: { type: 'integer' }, username: { type: 'string' }, passwordSet: { type: 'boolean' } },
  ['address', 'port', 'username', 'passwordSet'],
);
const params = object({ nodeId: uuidSchema }, ['nodeId']);

export function nodePowerRoutes(power: NodePower): AnyRoute[] {
  return [
    route<unknown, unknown, { nodeId: string }>({
      method: 'GET',
      path: '/nodes/{nodeId}/bmc',
      summary: "A node's BMC (never its password) and fencing",
      tags: ['nodes'],
      params,
      response: {
        description: 'the BMC, or null when none is declared',
        schema: object({ bmc: { oneOf: [bmcViewSchema, { type: 'null' }] }, fencing }, ['bmc', 'fencing']),
      },
      errors: [404],
      handler: ({ params }) => power.view(params.nodeId),
    }),
    route<BmcInput, unknown, { nodeId: string }>({
      method: 'PUT',
      path: '/nodes/{nodeId}/bmc',
      summary:
        "Declare a node's BMC (IPMI over LAN: `ipmitool -I lanplus`), which powers it on after a shutdown (node.power-on). The password may be left out to keep the one set before",
      tags: ['nodes'],
      admin: true,
      params,
      body: object({ address: bmcAddressSchema, port: bmcPortSchema, username: bmcUsernameSchema, password: bmcPasswordSchema, fencing }, [
        'address',
        'username',
      ]),
      response: { description: 'updated', schema: statusSchema('updated') },
      errors: [404, 409],
      handler: async ({ params, body }) => {
        await power.setBmc(params.nodeId, body);
        return { status: 'updated' };
      },
    }),
    route<unknown, unknown, { nodeId: string }>({
      method: 'DELETE',
      path: '/nodes/{nodeId}/bmc',
      summary: "Forget a node's BMC (and fencing): it then has no power control",
      tags: ['nodes'],
      admin: true,
      params,
      response: { description: 'deleted', schema: statusSchema('deleted') },
      errors: [404, 409],
      handler: async ({ params }) => {
        await power.clearBmc(params.nodeId);
        return { status: 'deleted' };
      },
    }),
  ];
}
