// The lab's machines over HTTP: a machine network-boots as iPXE does (GET /boot/config?mac=
// and runs the script it gets), and an install fetches its cloud-init user-data from
// /templates/rendered/cloud-init?mac= and keeps the agent's credential from it on its disk.
// From then on its agent speaks the agent protocol to the master's real port with its session
// cookies, as an agent on a real node does. The node id in each call is the machine's own and
// is not sent: the master takes it from the session.
import type { AgentResult, LogLine } from '../tasks/types.js';
import type { AgentReport } from '../fleet/types.js';
import type { BootAnswer, ClaimedRun, MasterLink } from '../fleet/protocol.js';
import { AgentHttpError, AgentSession } from '../fleet/agent-session.js';
import { throughLeaderGap } from '../fleet/leader-gap.js';
import { boundFetch, type FetchLike } from '../fleet/bound-fetch.js';
import { readAgentConfig, readBootScript } from './installer.js';
import type { MachineDisk } from './disk.js';
import { FailoverFetch } from './failover-fetch.js';

/** How long a step waits for its keys through a controller failover, and how often it asks. */
const KEYRING_PATIENCE_MS = 30_000;
const KEYRING_RETRY_MS = 250;

/** The most lines one POST /node/runs/{runId}/logs takes. */
const LINES_PER_CALL = 1000;

export class HttpAgentLink implements MasterLink {
  private readonly session: AgentSession;
  private readonly fetchFn: FetchLike;
  private readonly base: string;

  /** `address`: the machine's own (loopback) address its requests leave from, as its DHCP lease
   * (`dhcp`) records it; null: the host's default (127.0.0.1). `bases`: the master, or several
   * controllers, tried in turn when one refuses connections (failover-fetch.ts). */
  constructor(
    private readonly boot: Pick<MasterLink, 'fetchImage'>,
    bases: string | readonly string[],
    private readonly disk: MachineDisk,
    private readonly address: string | null = null,
    private readonly dhcp: ((mac: string, address: string) => void) | null = null,
  ) {
    const to = new FailoverFetch(typeof bases === 'string' ? [bases] : bases, address ? boundFetch(address) : fetch);
    this.base = to.base;
    this.fetchFn = to.fetch;
    this.session = new AgentSession(this.base, disk, this.fetchFn);
  }

  async pxeBoot(mac: string): Promise<BootAnswer> {
    // A network boot starts with DHCP: Quarry's server (if it runs one) leases the address.
    if (this.address) this.dhcp?.(mac, this.address);
    const answer = readBootScript(await this.text(`/boot/config?mac=${encodeURIComponent(mac)}`));
    this.session.reset();
    if (answer.action !== 'install') return answer;
    // The installer writes the credential to the system disk; a local boot finds it there.
    const credential = readAgentConfig(await this.text(`/templates/rendered/cloud-init?mac=${encodeURIComponent(mac)}`));
    if (credential) this.disk.saveAgentSecret({ ...credential, rotated: false });
    return credential ? { ...answer, credential } : answer;
  }

  private async text(path: string): Promise<string> {
    const res = await this.fetchFn(new URL(path, this.base));
    const body = await res.text();
    if (res.status !== 200) throw new AgentHttpError(res.status, `GET ${path.split('?')[0]}`, undefined);
    return body;
  }

  fetchImage(nodeId: string): Promise<void> {
    return this.boot.fetchImage(nodeId);
  }

  async report(_nodeId: string, report: AgentReport): Promise<void> {
    await this.session.call('POST', '/node/hardware', report);
  }

  async claim(_nodeId: string, waitMs: number, signal: AbortSignal, carrying?: readonly string[]): Promise<ClaimedRun | null> {
    const answer = await this.session.call('POST', '/node/runs/claim', { waitMs, ...(carrying ? { carrying } : {}) }, signal);
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

  /** Asked again while no controller leads (503), the leader is unreachable through a follower
   * (502) or the master is: a step in the middle of a failover waits for the next leader
   * rather than failing, and being started again, for want of its key. */
  async keyrings(nodeId: string): Promise<Array<{ entity: string; keyring: string }>> {
    return throughLeaderGap(
      async () => {
        const answer = await this.session.call('GET', `/ceph/nodes/${encodeURIComponent(nodeId)}/keyrings`);
        return (answer.json as { keyrings: Array<{ entity: string; keyring: string }> }).keyrings;
      },
      { patienceMs: KEYRING_PATIENCE_MS, retryMs: KEYRING_RETRY_MS },
    );
  }
}
