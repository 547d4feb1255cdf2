// The parts of the API's answers the CLI reads (GET /openapi.json has them whole).
export interface NodeView {
  id: string;
  hostname: string;
  name?: string;
  role: string;
  ip: string;
  status: string;
  labels?: Record<string, string>;
  approved?: boolean;
  diskCount: number;
  osdCount: number;
  createdAt: string;
  bmc?: unknown;
  fencing?: string;
  blocked?: { reason: string; message: string } | null;
  disruption?: unknown;
  ready?: { ready: boolean; reason: string; message: string };
  daemonsReady?: Array<{ type: string; phase: string; ready: boolean; reason: string; message: string }>;
  [field: string]: unknown;
}

export interface NicView {
  nodeId: string;
  nodeHostname: string;
  name: string;
  mac: string;
}

export interface DiskView {
  id: string;
  nodeId: string;
  nodeHostname: string;
  devicePath: string;
  serial: string;
  capacityBytes?: number;
  deviceClass?: string;
  isOsd: boolean;
  isMon: boolean;
  osdId: number | null;
  osdState?: string | null;
  eligible: boolean;
  reasons: string[];
  reason?: string;
  message?: string;
  progress?: unknown;
  history?: Array<{ at: string; event: string; message?: string }>;
  [field: string]: unknown;
}

export interface RunView {
  id: string;
  taskName: string;
  state: string;
  nodeId: string | null;
  nodeHostname: string | null;
  targetId: string;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  error: string | null;
}

export interface QuestionView {
  id: string;
  runId: string;
  taskName: string;
  prompt: string;
  options: string[];
  createdAt: string;
}

export interface LogLine {
  timestamp: string;
  level: string;
  message: string;
}

export interface BlockedView {
  kind: string;
  id: string;
  name: string;
  reason: string;
  message: string;
  since?: string;
  file?: string;
}

export interface StatusView {
  health: { status: string; checks: Array<{ code?: string; severity?: string; summary?: string }> };
  converged: boolean;
  convergence: Array<{ kind: string; ready: number; total: number }>;
  blocked: BlockedView[];
  blockedCount: number;
}

export interface SpecErrorView {
  file?: string;
  document?: number | null;
  line: number;
  column: number;
  field?: string;
  message: string;
}

export interface FileEntryView {
  file: string;
  size: number | null;
  modifiedAt: string | null;
  state: string | null;
  documents: number | null;
  appliedAt: string | null;
  lastError: { message: string; errors: SpecErrorView[] } | null;
}

export interface ChangeView {
  kind: string;
  id: string;
  name: string;
  document: number | null;
  fields?: string[];
  reason?: string;
}

export interface PlanView {
  file: string;
  valid: boolean;
  errors: SpecErrorView[];
  created: ChangeView[];
  updated: ChangeView[];
  pruned: ChangeView[];
  orphaned: ChangeView[];
  pending: Array<{ kind: string; name: string; reason: string; message: string }>;
  tasks: Array<{
    task: string;
    kind: string;
    id: string;
    name: string;
    destructive: boolean;
    wipes?: string;
    question?: string;
    moves?: string;
  }>;
  disruptions: Array<{ wave: number; kind: string; nodes: string[]; lease: boolean }>;
  disruptionNote?: string;
}

export interface FileStatusView {
  file: string;
  state: string;
  documents: number;
  appliedAt: string | null;
  lastError: { message: string; errors: SpecErrorView[] } | null;
  objects: ChangeView[];
  pending: Array<{ kind: string; name: string; reason: string; message: string }>;
}

export interface EventView {
  id: string;
  type: string;
  at?: string;
  payload: Record<string, unknown>;
}
