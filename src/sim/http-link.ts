// The lab's agents over HTTP: a machine network-boots through the in-process gateway (until
// GET /boot/config serves real boot answers, issue 4/6), keeps the credential of its install
// answer on its disk, and from then on speaks the agent protocol to the master's real port
// with its session cookies, as an agent on a real node does. The node id in each call is the
// machine's own and is not sent: the master takes it from the session.
import type { AgentResult, LogLine } from '../tasks/types.js';
import type { AgentReport } from '../fleet/types.js';
import type { BootAnswer, ClaimedRun, MasterLink } from '../fleet/protocol.js';
import { AgentSession } from '../fleet/agent-session.js';
import type { MachineDisk } from './disk.js';

/** The most lines one POST /node/runs/{runId}/logs takes. */
const LINES_PER_CALL = 1000;

export class HttpAgentLink implements MasterLink {
  private readonly session: AgentSession;

  constructor(
    private readonly boot: Pick<MasterLink, 'pxeBoot' | 'fetchImage'>,
    base: string,
    private readonly disk: MachineDisk,
  ) {
    this.session = new AgentSession(base, disk);
  }

  async pxeBoot(mac: string): Promise<BootAnswer> {
    const answer = await this.boot.pxeBoot(mac);
    this.session.reset();
    // The installer writes the credential to the system disk; a local boot finds it there.
    if (answer.credential) this.disk.saveAgentSecret({ ...answer.credential, rotated: false });
    return answer;
  }

  fetchImage(nodeId: string): Promise<void> {
    return this.boot.fetchImage(nodeId);
  }

  async report(_nodeId: string, report: AgentReport): Promise<void> {
    await this.session.call('POST', '/node/hardware', report);
  }

  async claim(_nodeId: string, waitMs: number, signal: AbortSignal): Promise<ClaimedRun | null> {
    const answer = await this.session.call('POST', '/node/runs/claim', { waitMs }, signal);
    return answer.status === 204 ? null : (answer.json as ClaimedRun);
  }

  async log(_nodeId: string, runId: string, lines: LogLine[]): Promise<void> {
    for (let i = 0; i < lines.length; i += LINES_PER_CALL) {
      await this.session.call('POST', `/node/runs/${encodeURIComponent(runId)}/logs`, { lines: lines.slice(i, i + LINES_PER_CALL) });
    }
  }

  async finish(_nodeId: string, runId: string, result: AgentResult): Promise<void> {
    await this.session.call('POST', `/node/runs/${encodeURIComponent(runId)}/finish`, result);
  }
}
