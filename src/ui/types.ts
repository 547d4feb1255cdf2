// The fields of Quarry's answers the dashboard reads (docs/api-conventions.md has them all). The
// browser code imports nothing of the server, so these are written down here; a field the page
// does not use is left out.

export interface User {
  id: string;
  username: string;
  name: string;
  isAdmin: boolean;
}

export interface Problem {
  status: number;
  code?: string;
  detail?: string;
  errors?: Array<{ path: string; message: string }>;
  requestId?: string;
}

export type Severity = 'HEALTH_OK' | 'HEALTH_WARN' | 'HEALTH_ERR';

export interface Blocked {
  kind: string;
  id: string;
  name: string;
  reason: string;
  message: string;
  since: string | null;
  file?: string;
  checks: Array<{ code: string; severity: Severity; message: string }>;
}

export interface StatusSummary {
  health: { status: Severity | 'UNKNOWN'; checks: Array<{ code: string; severity: Severity; message: string; count: number }> };
  converged: boolean;
  convergence: Array<{ kind: string; ready: number; total: number }>;
  blocked: Blocked[];
  blockedCount: number;
}

export interface DaemonReadiness {
  type: string;
  ready: boolean;
  phase: string;
  reason: string;
  message: string;
}

export interface NodeDetail {
  id: string;
  hostname: string;
  name: string;
  role: string;
  ip: string;
  labels?: Record<string, string>;
  status: string;
  diskCount: number;
  osdCount: number;
  approved: boolean;
  blocked: { reason: string; message: string } | null;
  /** Its place in the disruption budget: a lease held, or waiting for one. */
  disruption: { state: 'held' | 'waiting'; kind: string; since: string; heldBy?: string[]; reason?: string } | null;
  ready: { ready: boolean; reason: string; message: string };
  daemonsReady: DaemonReadiness[];
}

export interface DiskView {
  id: string;
  nodeId: string;
  nodeHostname: string;
  devicePath: string;
  capacityBytes: number;
  serial: string;
  deviceClass: string | null;
  isOsd: boolean;
  isMon: boolean;
  hasFilesystem: boolean;
  osdId: number | null;
  osdState: string | null;
  message: string;
  eligible: boolean;
  reasons: string[];
  reason: string | null;
  progress: { pgs: number; startPgs: number; bytes: number; startBytes: number } | null;
}

export type RunState = 'pending' | 'running' | 'completed' | 'failed' | 'canceled';

export interface Run {
  id: string;
  taskName: string;
  state: RunState;
  nodeId: string | null;
  nodeHostname: string | null;
  targetId: string;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  error: string | null;
}

export interface LogLine {
  timestamp: string;
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
}

export interface Question {
  id: string;
  runId: string;
  taskName: string;
  prompt: string;
  options: string[];
  createdAt: string;
}

export interface FileError {
  file: string;
  document: number | null;
  line: number;
  column: number;
  field: string;
  message: string;
}

export interface Pending {
  document: number;
  kind: string;
  name: string;
  reason: string;
  message: string;
}

export interface SpecFile {
  file: string;
  state: 'applied' | 'pending' | 'failed' | 'deleted';
  documents: number;
  appliedAt: string | null;
  lastError: { message: string; errors: FileError[] } | null;
  pending: Pending[];
  converged?: boolean;
  blocking?: Array<{ kind: string; id: string; name: string; reason: string; message: string }>;
}

export interface Change {
  kind: string;
  id: string;
  name: string;
  fields: string[];
  reason?: string;
}

export interface Plan {
  file: string;
  valid: boolean;
  errors: FileError[];
  created: Change[];
  updated: Change[];
  pruned: Change[];
  orphaned: Change[];
  pending: Pending[];
  tasks: Array<{ task: string; kind: string; name: string; destructive: boolean; wipes?: string; question?: string }>;
  disruptions: Array<{ wave: number; kind: string; domains: string[]; nodes: string[] }>;
  disruptionNote?: string;
}

export interface CephMetrics {
  health: Severity;
  osdCount: number;
  osdUp: number;
  osdIn: number;
  pgCount: number;
  usedBytes: number;
  totalBytes: number;
}

/** One message of GET /events: `{ type, at, payload }` (the hub's `resync` has no `at`). */
export interface LiveEvent {
  id: string;
  type: string;
  at?: string;
  payload?: Record<string, unknown>;
}
