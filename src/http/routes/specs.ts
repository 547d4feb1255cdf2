// The watched specs folder: every file's state with its last error, and dry runs of a file. With
// several controllers the folder is the leader's (src/main/gitops.ts), so these are relayed there.
import type { SpecsFolder } from '../../gitops/folder.js';
import { SPEC_API_VERSION, envelopeSchema, specInputSchemas } from '../../model/spec-inputs.js';
import { route, type AnyRoute } from '../route.js';
import { conditionView, object, uuidSchema } from '../schemas.js';
import { DISRUPTION_LEASE_KINDS } from '../../model/disruption-kinds.js';
import type { Convergence } from '../../services/convergence.js';
import { SPEC_FILE_NAME, type SpecFiles } from '../../gitops/files.js';

const str = { type: 'string' };
const int = { type: 'integer' };
const strings = { type: 'array', items: str };
const errorView = object(
  {
    file: str,
    document: { type: ['integer', 'null'] },
    line: int,
    column: int,
    field: { type: 'string', description: "JSON pointer of the field; '' for a document or the file" },
    message: str,
  },
  ['file', 'document', 'line', 'column', 'field', 'message'],
);
const ref = { kind: str, id: str, name: str, document: { type: ['integer', 'null'] } };
const refView = object(ref, ['kind', 'id', 'name', 'document']);
const pendingView = object(
  {
    document: int,
    kind: str,
    name: str,
    reason: str,
    message: str,
    id: { type: 'string', description: 'the object, when it exists (a node whose disks are awaited)' },
    since: { type: 'string', description: 'since when the folder has seen it pending (not in a dry run)' },
  },
  ['document', 'kind', 'name', 'reason', 'message'],
);
const changeView = object({ ...ref, fields: strings, reason: str }, ['kind', 'id', 'name', 'document', 'fields']);
const count = { type: 'integer', minimum: 0 };
const taskView = object(
  {
    task: str,
    kind: str,
    id: str,
    name: str,
    destructive: {
      type: 'boolean',
      description: 'the step destroys something (data, an id, a key) or takes it out of service (an OSD out or stopped)',
    },
    wipes: { type: 'string', description: 'the disk whose contents the task destroys' },
    affects: {
      ...object(
        {
          osdId: count,
          bytes: { ...count, description: 'bytes of data on it (ceph osd df); absent when Ceph did not answer in time' },
          pgs: { ...count, description: 'placement groups on it (ceph osd df); absent when Ceph did not answer in time' },
        },
        ['osdId'],
      ),
      description: "an OSD's task: the OSD it acts on (for a replacement's creation, the id it takes over)",
    },
    moves: {
      type: 'string',
      description: 'a CRUSH task: the data Ceph will move to match (a host placed under other buckets, pools on another rule)',
    },
    question: {
      type: 'string',
      description:
        "a data-bearing deletion (a filesystem's or an RGW user's state: absent): the question an operator answers first, naming what goes as far as Quarry's status knows it",
    },
    pools: {
      type: 'array',
      items: object(
        {
          name: str,
          objects: { ...count, description: 'objects in it (ceph df); absent when Ceph did not answer in time' },
          bytes: { ...count, description: 'bytes stored in it (ceph df); absent when Ceph did not answer in time' },
        },
        ['name'],
      ),
      description: "a filesystem's deletion: the pools it destroys, with what is in them",
    },
    quorumAfter: {
      ...object(
        {
          monitor: { type: 'string', description: "the monitor removed (its node's hostname)" },
          monitors: { ...count, description: 'monitors in the monmap once it is removed' },
          up: { ...count, description: 'of those, how many were in quorum when the plan was made' },
          majority: { ...count, description: 'how many of them must stay up for a quorum; the loop waits rather than remove below it' },
        },
        ['monitor', 'monitors', 'up', 'majority'],
      ),
      description: "a monitor's removal (ceph.mon.monmap-remove, ceph.mon.remove): the monmap and quorum it leaves",
    },
  },
  ['task', 'kind', 'id', 'name', 'destructive'],
);
const disruptionView = object(
  {
    wave: { type: 'integer', minimum: 1, description: 'a wave starts once the one before has given its leases back' },
    kind: { enum: DISRUPTION_LEASE_KINDS },
    domains: { type: 'array', items: str, description: 'failure domains: a hostname, or `rack:r1` when the failure domain is a level' },
    nodes: { type: 'array', items: str, description: 'hostnames' },
    nodeIds: { type: 'array', items: uuidSchema },
    destructive: { const: true },
    lease: { type: 'boolean', description: 'false: the nodes run no Ceph daemon and go at once, without a lease' },
  },
  ['wave', 'kind', 'domains', 'nodes', 'nodeIds', 'destructive', 'lease'],
);
const orphanCondition = { ...conditionView, required: ['type', 'status', 'reason', 'message'] };

const lastErrorView = {
  anyOf: [{ type: 'null' }, object({ message: str, errors: { type: 'array', items: errorView } }, ['message', 'errors'])],
};
const fileView = object(
  {
    file: { type: 'string', description: 'path relative to SPECS_DIR' },
    state: {
      enum: ['applied', 'pending', 'failed', 'deleted'],
      description: 'pending: applied, but something it names does not exist yet',
    },
    documents: int,
    appliedAt: { type: ['string', 'null'] },
    lastError: lastErrorView,
    objects: { type: 'array', items: refView, description: 'what the file owns' },
    pending: { type: 'array', items: pendingView },
    orphans: {
      type: 'array',
      items: object({ ...ref, condition: orphanCondition }, ['kind', 'id', 'name', 'document', 'condition']),
      description: 'data-bearing objects the file no longer declares: kept, owned by no one',
    },
    converged: {
      type: 'boolean',
      description: "every object the file declares is Ready (a node's daemons with it), none is pending, and the file applied",
    },
    blocking: {
      type: 'array',
      items: object({ kind: str, id: str, name: str, reason: str, message: str }, ['kind', 'id', 'name', 'reason', 'message']),
      description:
        "the first objects that are not Ready, with why (id '' for a pending one whose object does not exist yet, kind File when the file failed)",
    },
  },
  ['file', 'state', 'documents', 'appliedAt', 'lastError', 'objects', 'pending', 'orphans'],
);

const planSchema = object(
  {
    file: str,
    valid: { type: 'boolean' },
    errors: { type: 'array', items: errorView },
    created: { type: 'array', items: changeView },
    updated: { type: 'array', items: changeView },
    pruned: { type: 'array', items: changeView },
    orphaned: { type: 'array', items: changeView },
    pending: { type: 'array', items: pendingView },
    tasks: {
      type: 'array',
      items: taskView,
      description: 'every task run the apply would start (a retry after a failure aside), in order where the order is known',
    },
    disruptions: {
      type: 'array',
      items: disruptionView,
      description: "the nodes it restarts or shuts down, in the disruption budget's waves (failure domain by failure domain)",
    },
    disruptionNote: { type: 'string', description: "with disruptions: Ceph's ok-to-stop is asked when each wave's turn comes" },
  },
  ['file', 'valid', 'errors', 'created', 'updated', 'pruned', 'orphaned', 'pending', 'tasks', 'disruptions'],
);

const fileNameParam = object(
  {
    name: {
      type: 'string',
      pattern: SPEC_FILE_NAME,
      description: 'a .yaml or .yml file at the top of the specs folder: no path separator, no .., not hidden',
    },
  },
  ['name'],
);
const nullable = (schema: object) => ({ anyOf: [{ type: 'null' }, schema] });
const fileEntryView = object(
  {
    file: str,
    size: { type: ['integer', 'null'], description: 'bytes on disk; null when the folder still knows a file gone from disk' },
    modifiedAt: { type: ['string', 'null'] },
    state: { ...nullable({ enum: ['applied', 'pending', 'failed', 'deleted'] }), description: 'null: the folder has not read it yet' },
    documents: { type: ['integer', 'null'] },
    appliedAt: { type: ['string', 'null'], description: 'when the folder last applied it' },
    lastError: lastErrorView,
  },
  ['file', 'size', 'modifiedAt', 'state', 'documents', 'appliedAt', 'lastError'],
);
const stillApplying = object({ file: str, status: { const: 'applying' } }, ['file', 'status']);
const writeView = object({ file: str, applied: fileView, plan: planSchema }, ['file', 'applied', 'plan']);
const deleteView = object({ file: str, applied: fileView }, ['file', 'applied']);

/** GET/PUT/DELETE /specs/files: the folder's files through the API (src/gitops/files.ts). */
function fileRoutes(files: SpecFiles): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/specs/files',
      leader: true,
      tags: ['specs'],
      summary: "The specs folder's files: size, when the folder last applied each, its state and its last error (line and column)",
      response: { description: 'files by name', schema: object({ files: { type: 'array', items: fileEntryView } }, ['files']) },
      handler: async () => ({ files: await files.list() }),
    }),
    route<unknown, unknown, { name: string }>({
      method: 'GET',
      path: '/specs/files/{name}',
      leader: true,
      tags: ['specs'],
      admin: true,
      summary: "A specs file's YAML text, as it is in the folder (admins: a file may hold a BMC's password)",
      params: fileNameParam,
      response: { description: 'the YAML text', contentType: 'application/yaml' },
      handler: ({ params }) => files.read(params.name),
    }),
    route<string, unknown, { name: string }>({
      method: 'PUT',
      path: '/specs/files/{name}',
      leader: true,
      tags: ['specs'],
      admin: true,
      summary:
        'Write a specs file into the folder (YAML body). It is judged first exactly as the folder would judge it; a bad one is 400 SPEC_INVALID ' +
        'with every error at its line and column, and nothing is written. A good one replaces the file atomically (a temporary file renamed), ' +
        'and the answer says what the folder applied; 202 when the folder has not applied it within 10 s (GET /specs/status follows it)',
      params: fileNameParam,
      bodyType: 'text',
      textTypes: ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/plain'],
      response: {
        description: 'written and applied by the folder (state failed: refused by the folder after all, in a race with another change)',
        schema: writeView,
        also: { status: 202, description: 'written; the folder is still applying it', schema: stillApplying },
      },
      handler: async ({ params, body, ctx }) => {
        const w = await files.write(params.name, body);
        if (w.applied) return { file: w.file, applied: w.applied, plan: w.plan };
        ctx.status = 202;
        ctx.body = { file: w.file, status: 'applying' };
        return undefined;
      },
    }),
    route<unknown, unknown, { name: string }>({
      method: 'DELETE',
      path: '/specs/files/{name}',
      leader: true,
      tags: ['specs'],
      admin: true,
      summary:
        'Remove a specs file, as removing it from the folder does: what it owned is pruned, except objects that hold data, kept and ' +
        'marked orphaned (state: absent in a file removes those). 202 when the folder has not applied the removal within 10 s',
      params: fileNameParam,
      response: {
        description: 'removed; the folder applied the removal',
        schema: deleteView,
        also: { status: 202, description: 'removed; the folder is still applying it', schema: stillApplying },
      },
      handler: async ({ params, ctx }) => {
        const d = await files.remove(params.name);
        if (d.applied) return d;
        ctx.status = 202;
        ctx.body = { file: d.file, status: 'applying' };
        return undefined;
      },
    }),
  ];
}

/** `convergence`: each file also says whether what it declares is Ready (absent: the files alone).
 * `files`: the routes that read and write the folder's files. */
export function specRoutes(folder: SpecsFolder, convergence?: Convergence, files?: SpecFiles): AnyRoute[] {
  return [
    ...(files ? fileRoutes(files) : []),
    route({
      method: 'GET',
      path: '/specs/schemas',
      tags: ['specs'],
      summary:
        "The JSON Schemas of a specs file's documents: the envelope, and each kind's spec (the very schemas the API's bodies are validated with, where the API declares that kind)",
      response: {
        description: 'schemas',
        schema: object(
          { apiVersion: str, envelope: { type: 'object' }, kinds: { type: 'object', additionalProperties: { type: 'object' } } },
          ['apiVersion', 'envelope', 'kinds'],
        ),
      },
      handler: () => ({ apiVersion: SPEC_API_VERSION, envelope: envelopeSchema, kinds: specInputSchemas }),
    }),
    route({
      method: 'GET',
      path: '/specs/status',
      leader: true,
      tags: ['specs'],
      summary:
        'Every file of the watched specs folder: its state, last error (file, line, column, field), the objects it owns and those it left orphaned, and whether all it declares is Ready (converged) or what blocks it',
      response: { description: 'files by path', schema: { type: 'array', items: fileView } },
      handler: () => (convergence ? convergence.files(folder.status()) : folder.status()),
    }),
    route<string, { file?: string }>({
      method: 'POST',
      path: '/specs/plan',
      leader: true,
      tags: ['specs'],
      readOnly: true,
      summary:
        'Dry run: what applying this YAML as the file `file` would create, update, prune and orphan, and the task runs the loops would schedule. Changes nothing',
      bodyType: 'text',
      textTypes: ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/plain'],
      query: object({
        file: {
          type: 'string',
          pattern: '^[A-Za-z0-9_][A-Za-z0-9_./-]{0,254}\\.ya?ml$',
          description: "the file it would be (its objects are compared as that file's); default plan.yaml",
        },
      }),
      response: { description: 'the plan; errors when the text would be refused', schema: planSchema },
      handler: ({ body, query }) => folder.plan(query.file ?? 'plan.yaml', body),
    }),
  ];
}
