// What the lab process (src/sim/serve.ts) and the controllers that reach it over loopback HTTP
// (src/sim/remote-lab.ts) say to each other. The lab lives outside the controllers so that a
// controller's SIGKILL does not take the datacenter with it: its Ceph answers the CLI lines the
// master's clients build (the Runner seam, so the real CephClient/RgwAdmin parse real output on
// the controller's side), its BMCs the IPMI verbs, and its machines' agents speak the agent
// protocol to whichever controller is up. Everything here is JSON, and each side checks what it
// is given: the other side is another process.

/** Every request and answer body is at most this (a CLI line, a keyring, a JSON map). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** POST /ceph/run: one `ceph` or `radosgw-admin` command line, as the master's Runner runs it. */
export interface CephRunRequest {
  cmd: 'ceph' | 'radosgw-admin';
  /** Each argument a string, or `{ secret }` for one that must never be shown. */
  args: Array<string | { secret: string }>;
  timeoutMs: number;
  input?: string;
  /** The key the caller shows for its `-n` entity when it passes no `-k` (the client.admin key
   * the controller keeps in its store): what the simulated cephx checks. */
  key?: string;
  /** The `-k` keyring files the command line names, read on the controller's side. */
  keyrings?: Record<string, string>;
}

/** Its answer: the output, or the CLI's failure (a CommandError on the controller's side). */
export type CephRunAnswer =
  | { ok: true; stdout: string; stderr: string; files: Record<string, string> }
  | { ok: false; exitCode: number | null; stderr: string; signal: string | null; message: string; files: Record<string, string> };

export const BMC_VERBS = ['status', 'on', 'off', 'cycle'] as const;
export type BmcVerb = (typeof BMC_VERBS)[number];

/** POST /bmc/{verb}: one IPMI call at a lab BMC. */
export interface BmcRequest {
  address: string;
  port: number;
  username: string;
  password: string;
}

export type BmcAnswer = { ok: true; power?: 'on' | 'off'; log: string[] } | { ok: false; why: string; log: string[] };

/** One node-level step a lab machine carried out (the lab's step log). */
export interface StepLogEntry {
  runId: string;
  taskName: string;
  nodeId: string | null;
  hostname: string;
  args: Record<string, unknown>;
  /** ms since the epoch, when the step began. */
  at: number;
}

/** One boot of a lab machine that reached its agent. */
export interface BootLogEntry {
  index: number;
  nodeId: string;
  bootId: string;
  /** ms since the epoch, when the agent started. */
  at: number;
}

/** GET /lab/state: what tests check the world against. */
export interface LabState {
  machines: Array<{ index: number; mac: string; nodeId: string | null; hostname: string; powered: boolean; bootId: string }>;
  osds: Array<{ id: number; uuid: string; host: string | null; devicePath: string | null; up: boolean }>;
  steps: StepLogEntry[];
  boots: BootLogEntry[];
  /** Every BMC call, in order, without the password. */
  bmcCalls: Array<{ address: string; verb: BmcVerb }>;
}

/** POST /lab/start: the controllers the machines' agents speak to, first one first. */
export interface LabStartRequest {
  controllers: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringMap = (v: unknown): v is Record<string, string> => isObject(v) && Object.values(v).every((x) => typeof x === 'string');

/** A loopback http(s) URL without credentials: the only place a lab is reached at, or reaches. */
export function isLoopbackUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const u = new URL(value);
    const loopback = /^127(\.\d{1,3}){3}$/.test(u.hostname) || u.hostname === 'localhost' || u.hostname === '[::1]';
    return (u.protocol === 'http:' || u.protocol === 'https:') && loopback && !u.username && !u.password;
  } catch {
    return false;
  }
}

/** Why a body is not a CephRunRequest, or null when it is one. */
export function cephRunProblem(b: unknown): string | null {
  if (!isObject(b)) return 'the body must be an object';
  if (b.cmd !== 'ceph' && b.cmd !== 'radosgw-admin') return 'cmd must be ceph or radosgw-admin';
  const args = b.args;
  if (!Array.isArray(args) || args.length > 256) return 'args must be an array of at most 256';
  const argOk = (a: unknown): boolean =>
    typeof a === 'string' || (isObject(a) && typeof a.secret === 'string' && Object.keys(a).length === 1);
  if (!args.every(argOk)) return 'each argument must be a string or { secret }';
  if (typeof b.timeoutMs !== 'number' || !Number.isInteger(b.timeoutMs) || b.timeoutMs < 1 || b.timeoutMs > 3_600_000)
    return 'timeoutMs must be an integer from 1 to 3600000';
  if (b.input !== undefined && typeof b.input !== 'string') return 'input must be a string';
  if (b.key !== undefined && typeof b.key !== 'string') return 'key must be a string';
  if (b.keyrings !== undefined && !isStringMap(b.keyrings)) return 'keyrings must map paths to text';
  return null;
}

/** Why a body is not a BmcRequest, or null when it is one. */
export function bmcProblem(b: unknown): string | null {
  if (!isObject(b)) return 'the body must be an object';
  for (const f of ['address', 'username', 'password'] as const) {
    if (typeof b[f] !== 'string' || b[f].length > 256) return `${f} must be a string of at most 256`;
  }
  if (typeof b.port !== 'number' || !Number.isInteger(b.port) || b.port < 1 || b.port > 65535) return 'port must be 1–65535';
  return null;
}

/** Why a body is not a LabStartRequest, or null when it is one. */
export function startProblem(b: unknown): string | null {
  if (!isObject(b) || !Array.isArray(b.controllers) || b.controllers.length === 0 || b.controllers.length > 16)
    return 'controllers must be a list of 1 to 16 URLs';
  if (!b.controllers.every(isLoopbackUrl)) return 'each controller must be a loopback http URL';
  return null;
}

/** Why an answer of POST /ceph/run is not a CephRunAnswer (the controller checks the lab too). */
export function cephAnswerProblem(a: unknown): string | null {
  if (!isObject(a) || typeof a.ok !== 'boolean' || typeof a.stderr !== 'string' || !isStringMap(a.files)) return 'not a run answer';
  if (a.ok) return typeof a.stdout === 'string' ? null : 'no stdout';
  const code = a.exitCode === null || typeof a.exitCode === 'number';
  return code && (a.signal === null || typeof a.signal === 'string') && typeof a.message === 'string' ? null : 'not a failure';
}

/** Why an answer of POST /bmc/{verb} is not a BmcAnswer. */
export function bmcAnswerProblem(a: unknown): string | null {
  if (!isObject(a) || typeof a.ok !== 'boolean' || !Array.isArray(a.log) || !a.log.every((l) => typeof l === 'string'))
    return 'not a BMC answer';
  if (!a.ok) return typeof a.why === 'string' ? null : 'no reason';
  return a.power === undefined || a.power === 'on' || a.power === 'off' ? null : 'a power state that is neither on nor off';
}
