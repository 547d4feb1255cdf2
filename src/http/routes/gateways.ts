// RADOS gateways and their S3 users. A gateway is a node's desired `rgw` daemon (its id is the
// node's id); deploying and removing one change desired state only, and the rgw loop starts or
// stops it. Users: created with their key pair; the secret key is shown once, in that answer.
import { NodeOperation } from '../../model/operations.js';
import { rgwUserInputSchema } from '../../model/storage-input.js';
import type { RgwUserSpec } from '../../model/storage-kinds.js';
import { RgwGateways } from '../../services/gateways.js';
import type { Store } from '../../store/types.js';
import type { Inventory } from '../../services/inventory.js';
import type { Invocations } from '../../services/invocations.js';
import type { RgwUsers } from '../../services/rgw-users.js';
import { route, type AnyRoute } from '../route.js';
import { object, statusSchema, uuidSchema } from '../schemas.js';
import { single } from '../target-result.js';

const gatewaySchema = object(
  {
    id: { ...uuidSchema, description: "the gateway's id: its node's id" },
    nodeId: uuidSchema,
    hostname: { type: 'string' },
    ip: { type: 'string', description: 'empty until the node reports an address' },
    port: { type: 'integer' },
    desired: { type: 'boolean', description: 'false for a removed gateway that is still being stopped' },
    running: { type: 'boolean', description: "the node's agent reports the gateway running" },
    state: { enum: ['pending', 'blocked', 'starting', 'running', 'failed', 'orphaned'], description: 'what the rgw loop last concluded' },
    message: { type: 'string' },
  },
  ['id', 'nodeId', 'hostname', 'ip', 'port', 'desired', 'running', 'state', 'message'],
);

const keysOf = (secret: boolean) => ({
  type: 'array',
  items: object(
    secret ? { accessKey: { type: 'string' }, secretKey: { type: 'string' } } : { accessKey: { type: 'string' } },
    secret ? ['accessKey', 'secretKey'] : ['accessKey'],
  ),
});
const userView = object(
  {
    userId: { type: 'string' },
    displayName: { type: 'string' },
    email: { type: 'string' },
    keys: { ...keysOf(false), description: 'access keys only: a secret key is shown once, when the user is created' },
    state: { enum: ['pending', 'blocked', 'creating', 'ready', 'failed', 'deleting'] },
    message: { type: 'string', description: 'why the user is not ready, or which key it has' },
  },
  ['userId', 'displayName', 'keys', 'state', 'message'],
);
const createdUser = object({ userId: { type: 'string' }, displayName: { type: 'string' }, email: { type: 'string' }, keys: keysOf(true) }, [
  'userId',
  'displayName',
  'keys',
]);

export interface GatewayDeps {
  store: Store;
  inventory: Inventory;
  invocations: Invocations;
  users: RgwUsers;
}

export function gatewayRoutes({ store, inventory, invocations, users }: GatewayDeps): AnyRoute[] {
  const gateways = new RgwGateways(store, inventory);
  return [
    route({
      method: 'GET',
      path: '/gateways/rgw',
      tags: ['gateways'],
      summary: 'The RADOS gateways: one per node that wants one, and removed ones until they have stopped',
      response: { description: 'gateways by hostname', schema: { type: 'array', items: gatewaySchema } },
      handler: () => gateways.list(),
    }),
    route<{ nodeId: string }>({
      method: 'POST',
      path: '/gateways/rgw/deploy',
      tags: ['gateways'],
      admin: true,
      summary: 'Deploy a RADOS gateway on a node (the same as invoking ceph.create-rgw on it)',
      body: object({ nodeId: uuidSchema }, ['nodeId']),
      response: { description: 'scheduled', schema: statusSchema('scheduled') },
      errors: [404, 409],
      handler: async ({ body }) => single((await invocations.invokeNodes(NodeOperation.createRgw, [body.nodeId]))[0]),
    }),
    route<unknown, unknown, { id: string }>({
      method: 'POST',
      path: '/gateways/rgw/{id}/remove',
      tags: ['gateways'],
      admin: true,
      summary: 'Remove a RADOS gateway: it is no longer desired, and the rgw loop stops it (a gateway holds no data)',
      params: object({ id: uuidSchema }, ['id']),
      response: { description: 'scheduled', schema: statusSchema('scheduled') },
      handler: async ({ params }) => {
        await gateways.remove(params.id);
        return { status: 'scheduled' };
      },
    }),
    route({
      method: 'GET',
      path: '/gateways/rgw/users',
      tags: ['gateways'],
      summary:
        'The RGW (S3) users with their access keys. Secret keys are never listed, to admins neither: each is shown once, in the answer that created it',
      response: { description: 'users by id', schema: { type: 'array', items: userView } },
      handler: () => users.list(),
    }),
    route<RgwUserSpec>({
      method: 'POST',
      path: '/gateways/rgw/users',
      tags: ['gateways'],
      admin: true,
      summary:
        'Create an RGW (S3) user. Answers 201 with its key pair once the user exists in RGW (this is the only time the secret key is shown), ' +
        'or 202 when that takes longer than 30 s (monitor quorum and a running gateway are needed): repeat the same request later to get the keys. ' +
        'A user whose secret was shown already, or declared with another display name or email, is 409 RGW_USER_EXISTS.',
      body: rgwUserInputSchema,
      response: {
        status: 201,
        description: 'created, with the key pair (the secret key is shown this once)',
        schema: createdUser,
        also: {
          status: 202,
          description: 'declared, keys not issued yet: the same request again answers 201 with them once they are',
          schema: statusSchema('scheduled'),
        },
      },
      errors: [409],
      handler: async ({ body, ctx }) => {
        const spec: RgwUserSpec = { userId: body.userId, displayName: body.displayName, ...(body.email ? { email: body.email } : {}) };
        const created = await users.create(spec);
        if (created) return created;
        ctx.status = 202;
        ctx.body = { status: 'scheduled' };
        return undefined;
      },
    }),
  ];
}
