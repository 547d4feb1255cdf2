// Task runs: every script execution is a run tied to (object, generation), with logs,
// a timeout, cancel, and questions that hold it until answered.
import type { Doc } from '../model/document.js';
import type { RunState, TaskRunSpec, TaskRunStatus } from '../model/kinds.js';
import type { Runner } from '../exec/runner.js';
import type { ObjectNames } from '../model/document.js';

export type TaskRun = Doc<TaskRunSpec, TaskRunStatus>;

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export interface LogLine {
  timestamp: string;
  level: LogLevel;
  message: string;
}

/** What a master-level script gets while it runs. */
export interface RunContext {
  runId: string;
  args: Record<string, unknown>;
  signal: AbortSignal;
  log(level: LogLevel, message: string): void;
  /** A Runner whose output streams into this run's log. */
  runner: Runner;
  /** Holds the run until an operator answers; resolves with the chosen option. */
  ask(prompt: string, options: string[]): Promise<string>;
}

/** A master-level step. What it returns is kept as the run's result. */
// `void`, not `undefined`: a script that returns nothing is written without `return undefined`.
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- see the line above
export type Script = (ctx: RunContext) => Promise<Record<string, unknown> | void>;

export interface StartRequest {
  taskName: string;
  /** `name`: the object's name, kept on the run for events and logs an operator can read;
   * `names` its other names (YAML name, hostname, device path); `requestId` the HTTP request that
   * wrote the generation the run acts on (runTarget in src/model/object-names.ts fills all). */
  target: { kind: string; id: string; generation: number; name?: string; names?: ObjectNames; requestId?: string | null };
  /** Node-level steps name the node: its agent claims and carries them out. */
  node?: { id: string; hostname: string } | null;
  args?: Record<string, unknown>;
  timeoutMs?: number;
  attempt?: number;
  /** Master-level steps: the code to run. Absent for node-level steps. */
  script?: Script;
}

/** What an agent reports when it finishes a claimed run. */
export interface AgentResult {
  ok: boolean;
  error?: string;
  result?: Record<string, unknown>;
}

/** A question waiting for an operator, as the API lists it. */
export interface PendingQuestion {
  id: string;
  runId: string;
  taskName: string;
  prompt: string;
  options: string[];
  createdAt: string;
}

/** An object that had runs interrupted by a restart; its loop should be requeued. */
export interface RunTarget {
  kind: string;
  id: string;
}

export interface EventMap {
  /** `target.name` is the object's name (a YAML name, `host/serial` for a disk); `node` the node
   * a node-level step runs on; `error` a failed or canceled run's reason. */
  'task.state.changed': {
    runId: string;
    taskName: string;
    state: RunState;
    attempt?: number;
    target?: RunTargetRef;
    node?: { id: string; hostname: string | null } | null;
    error?: string | null;
    /** The HTTP request (X-Request-Id) that wrote the generation the run acts on. */
    requestId?: string;
  };
  /** `prompt`/`options`: the question itself (Quarry's words, no secret); target, node and
   * request as for task.state.changed. */
  'task.question.asked': {
    runId: string;
    taskName: string;
    questionId: string;
    prompt?: string;
    options?: string[];
    target?: RunTargetRef;
    node?: { id: string; hostname: string | null } | null;
    requestId?: string;
  };
  'task.question.answered': {
    runId: string;
    taskName: string;
    questionId: string;
    answer: string;
    prompt?: string;
    answeredBy?: string;
    target?: RunTargetRef;
    node?: { id: string; hostname: string | null } | null;
    requestId?: string;
    /** The request that answered (`requestId` stays the one that caused the run). */
    answerRequestId?: string;
  };
  /** `reason`/`message`: why it is in that phase, or what blocks it (its Blocked condition). */
  'node.state.changed': {
    nodeId: string;
    status: string;
    hostname?: string;
    name?: string;
    reason?: string;
    message?: string;
  } & ObjectNames;
  /** `name`: the image's name (its catalog name). */
  'image.download.progress': { imageId: string; bytes: number; total: number; percent: number; done: boolean; name?: string };
  'task.log': {
    runId: string;
    line: LogLine;
    taskName?: string;
    target?: RunTargetRef;
    node?: { id: string; hostname: string | null } | null;
    requestId?: string;
  };
  'disruption.lease.taken': DisruptionLeaseEvent;
  'disruption.lease.released': DisruptionLeaseEvent;
  /** A hung node power-cycled through its BMC (fencing: bmc), silent since then. */
  'node.fenced': {
    nodeId: string;
    hostname: string;
    silentSince: string;
    attempt: number;
    name?: string;
    requestId?: string;
  } & ObjectNames;
  /** A machine that booted and waits for an admin's approval (or a file that names it). */
  'node.approval.required': { nodeId: string; hostname: string; name?: string; macs: string[] };
  /** A node's agent credential was used by a second party: revoked, the node's approval taken back. */
  'node.credential.conflict': { nodeId: string; message: string; hostname?: string | null; name?: string | null };
  /** A specs file applied (src/gitops/folder.ts): the file, and each object it changed by kind,
   * id and YAML name. */
  'specs.applied': {
    file: string;
    state: string;
    created: SpecObjectRef[];
    updated: SpecObjectRef[];
    pruned: SpecObjectRef[];
    orphaned: SpecObjectRef[];
  };
  /** A specs file refused: nothing was changed; `message` and `errors` say why. */
  'specs.failed': { file: string; message: string; errors: unknown[] };
  /** A refused specs file that applies again: the error it had, refused since when. */
  'specs.recovered': { file: string; state: string; failedSince: string | null; error: { message: string; errors: unknown[] } };
  /** A specs file's pending entry appeared or changed reason (src/gitops/pending.ts). */
  'specs.pending': SpecsPendingEvent;
  /** It went: resolved, or no longer declared (the entry as it last was). */
  'specs.pending.cleared': SpecsPendingEvent;
}

/** A run's target in its events: id, name (a YAML name, `host/serial` for a disk) and its other
 * names (YAML name and file, hostname, a disk's device path and serial). */
export type RunTargetRef = { kind: string; id: string; name: string | null } & ObjectNames;

/** An object a specs file changed, as specs.applied names it. */
export interface SpecObjectRef {
  kind: string;
  id: string;
  name: string;
  document: number | null;
}

/** What a specs file waits for: the file, the object (kind, YAML name, id once it exists) and why. */
export interface SpecsPendingEvent {
  file: string;
  document: number;
  kind: string;
  name: string;
  id?: string;
  reason: string;
  message: string;
  since: string;
  severity: 'info' | 'warning';
}

/** A lease of the disruption budget taken or given back (reconcilers/shared/disruption-leases.ts). */
export interface DisruptionLeaseEvent {
  holderKind: string;
  holderId: string;
  /** The holder's names (a node's hostname, a disk's device path and serial, its YAML name). */
  holder?: ObjectNames;
  kind: string;
  what: string;
  nodes: string[];
  /** Each node's hostname, in the order of `nodes`. */
  hostnames: string[];
  domains: string[];
}

export interface BusEvent<K extends keyof EventMap = keyof EventMap> {
  /** Monotonic per process; SSE uses it as the event id. */
  seq: number;
  /** When it was published (ISO 8601). */
  at: string;
  type: K;
  payload: EventMap[K];
}
