// The master's side of the conversation with machines and their agents. The lab's simulated
// machines call it in-process, or through the HTTP agent routes, which call the same methods;
// both paths share every rule.
import { Kind, type NodeSpec, type NodeStatusFields } from '../model/kinds.js';
import type { Store } from '../store/types.js';
import type { AgentResult, LogLine, TaskRun } from '../tasks/types.js';
import { agentUsername, type AgentCredentials } from './credentials.js';
import { discoverNode } from './discovery.js';
import { decideBoot } from './boot-decision.js';
import { isApproved } from './enrollment.js';
import type { Doc } from '../model/document.js';
import type { Fleet } from './fleet.js';
import type { AgentRunState, BootAnswer, ClaimedRun, MasterLink } from './protocol.js';
import type { AgentReport } from './types.js';
import { InputError, NotFoundError } from '../errors.js';
import { agentReportSchema, isIpAddress } from '../model/agent-report.js';
import { createAjv, toFieldErrors } from '../model/validate.js';

const checkReport = createAjv().compile(agentReportSchema);

/** Throws InputError (400 VALIDATION_FAILED) naming the first few failing fields. The HTTP
 * route has checked already; this is the in-process lab link's door, and a second check. */
export function assertAgentReport(report: unknown): void {
  if (!checkReport(report)) {
    const errors = toFieldErrors(checkReport.errors, '/body').slice(0, 10);
    throw new InputError(`invalid agent report: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, errors);
  }
}

/** A socket's remote address as an IP the master may use: IPv4-mapped IPv6 (`::ffff:a.b.c.d`,
 * what a dual-stack listener reports) as plain IPv4; anything else that is not an IP, null. */
export function observedAddress(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(raw)?.[1];
  const ip = v4 ?? raw;
  return isIpAddress(ip) ? ip : null;
}

/** The node-level run queue as agents see it (TaskService provides it). */
export interface AgentRuns {
  claim(nodeId: string, waitMs: number, signal?: AbortSignal, carrying?: readonly string[]): Promise<TaskRun | null>;
  appendLogs(nodeId: string, runId: string, lines: LogLine[]): Promise<void>;
  finish(nodeId: string, runId: string, result: AgentResult): Promise<void>;
  /** NotFoundError for another node's run as for a missing one. */
  state(nodeId: string, runId: string): Promise<AgentRunState>;
}

export class AgentGateway implements MasterLink {
  constructor(
    private readonly store: Store,
    private readonly fleet: Fleet,
    private readonly runs: AgentRuns,
    readonly credentials: AgentCredentials,
  ) {}

  // The in-process link: only the lab's machines in this very process call it (benchmarks of a
  // thousand nodes), no network reaches it, so the nodes it discovers are approved. A node
  // that exists unapproved (found over HTTP) waits as it would there.
  async pxeBoot(mac: string): Promise<BootAnswer> {
    const { node } = await discoverNode(this.store, this.fleet, mac, false, true);
    const doc = node as Doc<NodeSpec, NodeStatusFields>;
    if (!isApproved(doc)) return { nodeId: node.id, hostname: node.spec.hostname, action: 'wait' };
    this.fleet.recordBoot(node.id, 'pxe');
    // The lab's in-process machines always have an image to install.
    const { action } = decideBoot(doc, true, await this.credentials.view(node.id));
    const answer: BootAnswer = { nodeId: node.id, hostname: node.spec.hostname, action: action === 'install' ? 'install' : 'local' };
    if (answer.action === 'install') await this.credentials.ensure(node.id);
    const secret = answer.action === 'install' ? await this.credentials.bootSecret(node.id) : null;
    return secret ? { ...answer, credential: { username: agentUsername(node.id), secret } } : answer;
  }

  async fetchImage(nodeId: string): Promise<void> {
    await this.mustExist(nodeId);
    this.fleet.recordBoot(nodeId, 'image');
  }

  /** Checked against the report schema here too, so the in-process lab link meets the same
   * door as HTTP; a report that fails changes nothing. `seen.address` is the source address of
   * the agent's connection, the one address the master observed itself. */
  async report(nodeId: string, report: AgentReport, seen: { address?: string | null } = {}): Promise<void> {
    assertAgentReport(report);
    await this.mustExist(nodeId);
    this.fleet.report(nodeId, report, observedAddress(seen.address));
  }

  async claim(nodeId: string, waitMs: number, signal: AbortSignal, carrying?: readonly string[]): Promise<ClaimedRun | null> {
    const run = await this.runs.claim(nodeId, waitMs, signal, carrying);
    return run ? { id: run.id, taskName: run.spec.taskName, args: run.spec.args } : null;
  }

  // Ownership first, so another node's run is "not found" rather than a conflict that
  // would tell an agent the run exists.
  async log(nodeId: string, runId: string, lines: LogLine[]): Promise<void> {
    await this.runs.state(nodeId, runId);
    return this.runs.appendLogs(nodeId, runId, lines);
  }

  async finish(nodeId: string, runId: string, result: AgentResult): Promise<void> {
    await this.runs.state(nodeId, runId);
    return this.runs.finish(nodeId, runId, result);
  }

  runState(nodeId: string, runId: string): Promise<AgentRunState> {
    return this.runs.state(nodeId, runId);
  }

  private async mustExist(nodeId: string): Promise<void> {
    if (!(await this.store.get<NodeSpec>(Kind.Node, nodeId))) throw new NotFoundError(`no node ${nodeId}`);
  }
}
