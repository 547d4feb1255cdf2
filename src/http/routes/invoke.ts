// Bulk operations on nodes and disks, and the single-target Ceph create endpoints. A request is
// refused whole only for the three reasons of docs/api-conventions.md ("Nodes, disks and
// operations"); otherwise every target gets its own result and one target's rejection never
// blocks the others.
import { DAEMONS, NODE_DAEMON_TYPES, daemonOfOperation, type DaemonEntry } from '../../catalogue/index.js';
import { InputError } from '../../errors.js';
import { DiskOperation, NodeOperation, diskOperations, nodeOperations } from '../../model/operations.js';
import type { Invocations } from '../../services/invocations.js';
import { single } from '../target-result.js';
import { route, type AnyRoute } from '../route.js';
import { object, statusSchema, uuidSchema } from '../schemas.js';
import { LIMIT_CODE } from '../validation.js';

export const MAX_TARGETS = 100;

// Over 100 ids is refused before the schema looks at any of them, with its own code (the route
// layer reads LIMIT_CODE), however many there are.
const ids = {
  type: 'array',
  items: uuidSchema,
  minItems: 1,
  maxItems: MAX_TARGETS,
  [LIMIT_CODE]: 'TOO_MANY_TARGETS',
  description: `at most ${MAX_TARGETS}; more is refused whole with 400 TOO_MANY_TARGETS`,
};
const resultSchema = object(
  {
    id: uuidSchema,
    status: { enum: ['scheduled', 'rejected'] },
    reason: { type: 'string', description: 'why a target was rejected' },
    code: {
      type: 'string',
      description: 'the stable code of a rejection that has one: SPEC_OWNED when a specs file owns what the operation would change',
    },
  },
  ['id', 'status'],
);
const resultsSchema = object({ results: { type: 'array', items: resultSchema } }, ['results']);

function checkCount(list: string[], what: string): void {
  if (list.length > MAX_TARGETS) {
    throw new InputError(
      `at most ${MAX_TARGETS} ${what} per request, got ${list.length}`,
      [{ path: `/${what}`, message: `must have at most ${MAX_TARGETS} items` }],
      'TOO_MANY_TARGETS',
    );
  }
}

/** The operations whose daemon keeps its store on a disk the request names (the monitor's). */
const DISK_OPERATIONS = NODE_DAEMON_TYPES.filter((t) => DAEMONS[t].needsDisk).map((t) => DAEMONS[t].operation as string);

function requireDisk(op: string, diskId: string | undefined): asserts diskId is string {
  if (!diskId)
    throw new InputError(
      `${op} needs diskId: the disk that will hold the monitor store`,
      [{ path: '/diskId', message: `required for ${op}` }],
      'DISK_REQUIRED',
    );
}

interface NodeBody {
  operation: NodeOperation;
  nodeIds: string[];
  diskId?: string;
  params?: Record<string, unknown>;
}

/** The spec fields a create operation takes (catalogue `params`; an NFS gateway's export), each
 * with its own schema; which ones an operation takes and needs is checked per operation. */
const PARAMS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  maxProperties: 16,
  properties: Object.fromEntries(
    NODE_DAEMON_TYPES.flatMap((t) => Object.entries(DAEMONS[t].params).map(([k, v]) => [k, { ...v, default: undefined }])),
  ),
};

function checkParams(op: NodeOperation, params: Record<string, unknown> | undefined): void {
  const t = daemonOfOperation(op);
  const d: DaemonEntry | undefined = t ? DAEMONS[t] : undefined;
  const taken = Object.keys(d?.params ?? {});
  for (const k of Object.keys(params ?? {})) {
    if (!taken.includes(k))
      throw new InputError(`${op} does not take params.${k}`, [{ path: `/params/${k}`, message: `not taken by ${op}` }]);
  }
  for (const k of d?.required ?? []) {
    if (params?.[k] === undefined)
      throw new InputError(`${op} needs params.${k}`, [{ path: `/params/${k}`, message: `required for ${op}` }], 'PARAM_REQUIRED');
  }
}

export function invokeRoutes(invocations: Invocations): AnyRoute[] {
  const createOn = (path: string, op: NodeOperation, summary: string): AnyRoute =>
    route<{ nodeId: string }>({
      method: 'POST',
      path,
      summary,
      tags: ['ceph'],
      admin: true,
      body: object({ nodeId: uuidSchema }, ['nodeId']),
      response: { description: 'scheduled', schema: statusSchema('scheduled') },
      errors: [404, 409],
      handler: async ({ body }) => single((await invocations.invokeNodes(op, [body.nodeId]))[0]),
    });
  return [
    route<NodeBody>({
      method: 'POST',
      path: '/invoke/node',
      summary: 'Run an operation on up to 100 nodes; each target is scheduled or rejected with a reason',
      tags: ['operations'],
      admin: true,
      body: object({ operation: { enum: [...nodeOperations] }, nodeIds: ids, diskId: uuidSchema, params: PARAMS_SCHEMA }, [
        'operation',
        'nodeIds',
      ]),
      response: { description: 'one result per distinct target', schema: resultsSchema },
      handler: async ({ body }) => {
        checkCount(body.nodeIds, 'nodeIds');
        if (DISK_OPERATIONS.includes(body.operation)) requireDisk(body.operation, body.diskId);
        else if (body.diskId)
          throw new InputError(`diskId is only taken by ${DISK_OPERATIONS.join(', ')}`, [
            { path: '/diskId', message: `only for ${DISK_OPERATIONS.join(', ')}` },
          ]);
        checkParams(body.operation, body.params);
        return { results: await invocations.invokeNodes(body.operation, body.nodeIds, body.diskId, body.params) };
      },
    }),
    route<{ operation: DiskOperation; diskIds: string[] }>({
      method: 'POST',
      path: '/invoke/disk',
      summary: 'Run an operation on up to 100 disks; each target is scheduled or rejected with a reason',
      tags: ['operations'],
      admin: true,
      body: object({ operation: { enum: [...diskOperations] }, diskIds: ids }, ['operation', 'diskIds']),
      response: { description: 'one result per distinct target', schema: resultsSchema },
      handler: async ({ body }) => {
        checkCount(body.diskIds, 'diskIds');
        return { results: await invocations.invokeDisks(body.operation, body.diskIds) };
      },
    }),
    route<{ nodeId: string; diskId?: string }>({
      method: 'POST',
      path: '/ceph/mon/create',
      summary: 'Declare a monitor on a node, keeping its store on the given disk',
      tags: ['ceph'],
      admin: true,
      body: object({ nodeId: uuidSchema, diskId: uuidSchema }, ['nodeId']),
      response: { description: 'scheduled', schema: statusSchema('scheduled') },
      errors: [404, 409],
      handler: async ({ body }) => {
        requireDisk(NodeOperation.createMon, body.diskId);
        return single((await invocations.invokeNodes(NodeOperation.createMon, [body.nodeId], body.diskId))[0]);
      },
    }),
    route<{ nodeId: string; diskId: string }>({
      method: 'POST',
      path: '/ceph/osd',
      summary:
        "Declare an OSD on a whole disk of a node; on a disk that holds this cluster's OSD (orphaned, or its BlueStore label), adopt it, undoing a removal not yet past purge or destroy",
      tags: ['ceph'],
      admin: true,
      body: object({ nodeId: uuidSchema, diskId: uuidSchema }, ['nodeId', 'diskId']),
      response: { description: 'scheduled', schema: statusSchema('scheduled') },
      errors: [404, 409],
      handler: async ({ body }) => {
        const [result] = await invocations.invokeDisks(DiskOperation.createOsd, [body.diskId], body.nodeId);
        return single(result);
      },
    }),
    createOn('/ceph/mgr', NodeOperation.createMgr, 'Declare a manager on a node'),
    createOn('/ceph/mds', NodeOperation.createMds, 'Declare a metadata server on a node'),
  ];
}
