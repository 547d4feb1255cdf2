// The shapes of answers that many tests read, declared once. A test names the shape it expects
// (`c.get<UserView>(path)`); nothing checks the declaration, the test's assertions do.
import type { NodeDaemonType } from '../../src/catalogue/index.js';
import type { Problem } from '../../src/http/problem.js';

/** A problem+json body as tests read it: `errors`/`errorCount` are read only where expected. */
export type ProblemBody = Required<Problem>;

/** `201 { status: 'created', id }` */
export interface Created {
  status: string;
  id: string;
}

/** A user as GET /users/{id} and GET /user/me answer. */
export interface UserView {
  id: string;
  username: string;
  name: string;
  email: string;
  isAdmin: boolean;
}

/** What POST /invoke/node and its kin answer: one result per node asked about. */
export interface InvokeResults {
  results: Array<{ id: string; status: string; reason?: string }>;
}

/** One disk of GET /disks (the fields of issue 14 on top of the contract's). */
export interface DiskView {
  id: string;
  nodeId: string;
  nodeHostname: string;
  devicePath: string;
  serial: string;
  /** Decimal GB (the contract's); capacityBytes is the same in bytes. */
  capacity: number;
  capacityBytes: number;
  isOsd: boolean;
  isMon: boolean;
  hasFilesystem: boolean;
  eligible: boolean;
  reasons: string[];
  osdId: number | null;
  /** The OSD's phase: running, draining, destroyed, ... */
  osdState: string | null;
  message: string;
  reason: string | null;
  progress: { pgs: number; startPgs: number; bytes: number; startBytes: number } | null;
  history: Array<{ at: string; event: string; osdId: number | null; otherSerial?: string; message: string }>;
  deviceClass: 'hdd' | 'ssd' | 'nvme';
  label: { fsid: string; osdId: number } | null;
  /** Serials of the other disk of a replacement. */
  replacedBy: string | null;
  replaces: string | null;
}

/** GET /ceph/metrics */
export type { ClusterMetrics } from '../../src/model/ceph-kinds.js';

/** GET /ceph/nodes/{nodeId}/state: each node daemon wanted and running, and the node's OSDs. */
export type NodeCephState = { nodeId: string; osdIds: number[] } & Record<NodeDaemonType, boolean>;

/** The parts of GET /openapi.json that tests read (OpenAPI 3.1). A type, not an interface: a
 * validator takes it as the `Record<string, unknown>` it asks for. */
export type OpenApiDoc = {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    responses: Record<string, OpenApiResponse>;
    schemas: Record<string, OpenApiSchema>;
    securitySchemes: Record<string, unknown>;
  };
};

export interface OpenApiOperation {
  operationId: string;
  parameters?: Array<{ name: string; in: string; schema: OpenApiSchema }>;
  requestBody?: { content: Record<string, { schema: OpenApiSchema }> };
  responses: Record<string, OpenApiResponse>;
  security?: Array<Record<string, string[]>>;
}

export interface OpenApiResponse {
  $ref?: string;
  description?: string;
  content?: Record<string, { schema?: OpenApiSchema }>;
}

export interface OpenApiSchema {
  type?: string;
  description?: string;
  maxItems?: number;
  properties?: Record<string, OpenApiSchema>;
}

/** GET /ceph/nodes/{nodeId}/keyrings */
export interface NodeKeyrings {
  keyrings: Array<{ entity: string; keyring: string }>;
}

/** The code of a problem+json body, for the error message of a setup step whose answer was not
 * the expected one (whatever the body is). */
export function codeOf(body: unknown): string {
  const code = (body as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : 'no problem code';
}
