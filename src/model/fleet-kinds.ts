// What the leader heard from the agents, kept in the store so that the next leader knows it at
// its election instead of waiting for every agent to report again (#18 part 3). Two kinds, as
// Kubernetes keeps a node's Lease apart from its status: a small heartbeat record renewed at a
// bounded rate whatever the report says, and the last report itself, written only when it
// changed. Both are written by the leader alone (src/fleet/heartbeat-records.ts), in batches.
import { agentReportSchema, ipOrEmptySchema } from './agent-report.js';

type JsonSchema = Record<string, unknown>;

export const FleetKind = { NodeHeartbeat: 'NodeHeartbeat', NodeInventory: 'NodeInventory' } as const;
export type FleetKind = (typeof FleetKind)[keyof typeof FleetKind];

/** Kinds no watcher may depend on: the leader's memory, read back only by the list at an
 * election. At 10,000 agents about 1,000 heartbeat records are renewed a second; on etcd both
 * the read cache's watch and the watchers' of every controller would carry and decode each for
 * nothing, so the etcd backend keeps them outside the key range its watches cover (like keys
 * outside its prefix: revisions move, no event comes). The embedded store, one process, still
 * tells its watchers of them, which they ignore. */
export const UNWATCHED_KINDS: ReadonlySet<string> = new Set([FleetKind.NodeHeartbeat, FleetKind.NodeInventory]);

/** Both kinds' spec: the node the record is of (its id is the node's id too). */
export interface FleetRecordSpec {
  nodeId: string;
}

/** A node's liveness: when the leader last renewed it on hearing the agent (Kubernetes'
 * Lease.spec.renewTime). Behind the agent's last report by at most the renewal interval. */
export interface NodeHeartbeatStatus {
  renewTime?: string;
}

/** The agent's last report as the leader received it (an AgentReport, checked by its schema),
 * the address it came from, and when that report was first received. */
export interface NodeInventoryStatus {
  report?: unknown;
  address?: string | null;
  reportedAt?: string;
}

const timestamp = { type: 'string', format: 'date-time' } as const;
/** The spec of every record of a node's observations (boot-kinds.ts's too). */
export const fleetRecordSpecSchema: JsonSchema = {
  type: 'object',
  required: ['nodeId'],
  additionalProperties: false,
  properties: { nodeId: { type: 'string', minLength: 1, maxLength: 128 } },
};

export const nodeHeartbeatSchemas: { spec: JsonSchema; status: JsonSchema } = {
  spec: fleetRecordSpecSchema,
  status: { type: 'object', additionalProperties: false, properties: { renewTime: timestamp } },
};

export const nodeInventorySchemas: { spec: JsonSchema; status: JsonSchema } = {
  spec: fleetRecordSpecSchema,
  status: {
    type: 'object',
    additionalProperties: false,
    properties: {
      report: agentReportSchema,
      address: { anyOf: [{ type: 'null' }, ipOrEmptySchema] },
      reportedAt: timestamp,
    },
  },
};
