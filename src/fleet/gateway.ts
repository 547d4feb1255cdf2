// The master's side of the conversation with machines and their agents. The lab's simulated
// machines call it in-process, or through the HTTP agent routes, which call the same methods;
// both paths share every rule.
import { NotFoundError } from '../errors.js';
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

/** The node-level run queue as agents see it (TaskService provides it). */
export interface AgentRuns {
  claim(nodeId: string, waitMs: number, signal?: AbortSignal): Promise<TaskRun | null>;
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

  async report(nodeId: string, report: AgentReport): Promise<void> {
    await this.mustExist(nodeId);
    this.fleet.report(nodeId, report);
  }

  async claim(nodeId: string, waitMs: number, signal: AbortSignal): Promise<ClaimedRun | null> {
    const run = await this.runs.claim(nodeId, waitMs, signal);
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
