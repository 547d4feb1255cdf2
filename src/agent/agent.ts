// The agent's two loops. A heartbeat reports the node's inventory and which daemons run (pid
// files) on POST /node/hardware; a claim loop long-polls POST /node/runs/claim, carries out the
// step, streams its log lines and reports the result. A run this agent was carrying when it died
// is not resumed: the master fails it when its deadline passes, and the loop starts a new one.
// A step that takes the machine down (the catalogue's `power`: node.restart, node.shutdown) does
// so only once its run is reported completed: the run is never lost with the boot, and the
// master learns of the reboot from the new boot id of the next report.
import { isStepName, step as stepEntry } from '../catalogue/index.js';
import { failureFields, type AgentSession } from '../fleet/agent-session.js';
import { throughLeaderGap } from '../fleet/leader-gap.js';
import type { AgentReport, DaemonReport, DiskReport, NicReport } from '../fleet/types.js';
import type { ClaimedRun } from '../fleet/protocol.js';
import { displayCommand, type Runner } from '../exec/runner.js';
import type { Logger } from '../log.js';
import type { AgentResult, LogLevel, LogLine } from '../tasks/types.js';
import type { CephHost } from './ceph-host.js';
import type { MasterFiles } from './master.js';
import type { AgentStep } from './steps/context.js';

export interface AgentDeps {
  session: Pick<AgentSession, 'call'>;
  steps: Map<string, AgentStep>;
  host: CephHost;
  master: MasterFiles;
  runner: Runner;
  inventory: () => Promise<{ disks: DiskReport[]; nics: NicReport[] }>;
  identity: { bootId: string; hostname: string; ip: string | null };
  heartbeatMs: number;
  claimWaitMs: number;
  /** Steps carried out at once (default 1). The master sends at most one run per daemon or
   * disk at a time, so steps at once act on different things: an OSD's mkfs need not wait
   * for the manager's start, which takes seconds. */
  parallelSteps?: number;
  /** How often a running step asks whether its run was canceled. */
  cancelPollMs?: number;
  /** What a power step runs once its run is reported (argv, through the runner). */
  power?: { reboot: readonly string[]; poweroff: readonly string[] };
  log: Logger;
}

type PowerAction = 'reboot' | 'poweroff';

/** The most a run's error may hold (POST /node/runs/{id}/finish). */
const MAX_ERROR = 4096;
const LOG_FLUSH_MS = 500;
/** `systemctl reboot` returns once the job is queued; a command still running after this hung. */
const POWER_COMMAND_TIMEOUT_MS = 60_000;
/** How long a run's result is offered to a master that is away (a controller failover takes
 * seconds); given up, the master's deadline fails the run. */
const RESULT_PATIENCE_MS = 120_000;

export class Agent {
  private stopping = new AbortController();
  private loops: Promise<void>[] = [];
  /** stop() was called: nothing starts the loops again. */
  private halted = false;
  /** The runs being carried out now: each claim says so, and a run a dead leader handed out
   * that is not among them (lost on the way, or with an earlier boot) is failed by the next. */
  private readonly carrying = new Set<string>();

  constructor(private readonly d: AgentDeps) {}

  start(): void {
    // Each loop ends with the signal it started with: loops started again after a power
    // command failed are new ones, and the old ones still end.
    const signal = this.stopping.signal;
    const claimers = Array.from({ length: Math.max(1, this.d.parallelSteps ?? 1) }, () => this.claimLoop(signal));
    this.loops = [this.every(signal, this.d.heartbeatMs, () => this.heartbeat()), ...claimers];
  }

  async stop(): Promise<void> {
    this.halted = true;
    this.stopping.abort();
    await Promise.allSettled(this.loops);
  }

  /** One report: inventory, addresses and daemons as they are now. First, the node's
   * ceph.conf follows the master's: a monitor added, gone or moved changes it, and a daemon
   * that restarts must find the monitors that are there now. */
  async heartbeat(): Promise<void> {
    await this.followConf().catch((err: unknown) => this.d.log('warn', "comparing ceph.conf with the master's failed", failureFields(err)));
    const [{ disks, nics }, daemons] = await Promise.all([this.d.inventory(), this.d.host.report()]);
    const ip = this.d.identity.ip ?? nics.find((n) => n.connected && n.ip)?.ip ?? '';
    const report: AgentReport = {
      bootId: this.d.identity.bootId,
      hostname: this.d.identity.hostname,
      ip,
      disks,
      nics,
      daemons: daemons satisfies DaemonReport,
    };
    await this.d.session.call('POST', '/node/hardware', report);
  }

  /** Fetches the master's ceph.conf again when its hash differs from the one this node's was
   * written from; a node that never took part in the cluster has none and fetches nothing. */
  async followConf(): Promise<boolean> {
    const have = await this.d.host.masterConfHash();
    if (have === null || have === (await this.d.master.configHash())) return false;
    await this.d.host.writeConf(await this.d.master.config());
    this.d.log('info', "ceph.conf updated: the master's changed");
    return true;
  }

  /** Claims and carries out one run; false when none came within the wait. */
  async claimOnce(): Promise<boolean> {
    const body = { waitMs: this.d.claimWaitMs, carrying: [...this.carrying] };
    const answer = await this.d.session.call('POST', '/node/runs/claim', body, this.stopping.signal);
    if (answer.status === 204) return false;
    const run = answer.json as ClaimedRun;
    this.carrying.add(run.id);
    try {
      await this.execute(run);
    } finally {
      this.carrying.delete(run.id);
    }
    return true;
  }

  private async claimLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.claimOnce();
      } catch (err) {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the agent may stop while claimOnce is awaited; TS keeps the loop condition's narrowing
        if (signal.aborted) return;
        this.d.log('warn', 'claiming a run failed', failureFields(err));
        await this.pause(signal, Math.min(this.d.heartbeatMs, 5_000));
      }
    }
  }

  async execute(run: ClaimedRun): Promise<AgentResult> {
    const lines: LogLine[] = [];
    const log = (level: LogLevel, message: string): void => void lines.push({ timestamp: new Date().toISOString(), level, message });
    const flush = async (): Promise<void> => {
      const batch = lines.splice(0);
      if (batch.length) await this.d.session.call('POST', `/node/runs/${encodeURIComponent(run.id)}/logs`, { lines: batch });
    };
    // Canceled by the master, or the agent stopping: the step's commands are killed and the run
    // is reported failed now rather than left for the master's deadline.
    const abort = new AbortController();
    const onStop = (): void => abort.abort();
    const stopSignal = this.stopping.signal;
    stopSignal.addEventListener('abort', onStop, { once: true });
    const timers = [
      setInterval(
        () => void flush().catch((err: unknown) => this.d.log('warn', 'sending run logs failed', { runId: run.id, ...failureFields(err) })),
        LOG_FLUSH_MS,
      ),
      setInterval(() => this.watchCancel(run.id, abort), this.d.cancelPollMs ?? 5_000),
    ];
    let result: AgentResult;
    try {
      const step = this.d.steps.get(run.taskName);
      if (!step) throw new Error(`this agent has no step ${run.taskName}`);
      log('info', `${run.taskName} started`);
      const out = await step({
        args: run.args,
        signal: abort.signal,
        log,
        runner: streamed(this.d.runner, log),
        host: this.d.host,
        master: this.d.master,
      });
      result = { ok: true, ...(out ? { result: out } : {}) };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log('error', message);
      result = { ok: false, error: message.length > MAX_ERROR ? `${message.slice(0, MAX_ERROR - 1)}…` : message };
    } finally {
      timers.forEach(clearInterval);
      stopSignal.removeEventListener('abort', onStop);
    }
    // Offered until taken: a result lost in a controller failover would have the run failed
    // and its step carried out again.
    await this.offer(flush);
    await this.offer(() => this.d.session.call('POST', `/node/runs/${encodeURIComponent(run.id)}/finish`, result));
    const power = result.ok && isStepName(run.taskName) ? stepEntry(run.taskName).power : undefined;
    if (power) {
      await this.powerDown(power, run.id);
      return result;
    }
    // The master learns at once what the step started or stopped.
    await this.heartbeat().catch((err: unknown) => this.d.log('warn', 'heartbeat failed', failureFields(err)));
    return result;
  }

  /** The machine goes down: nothing more is claimed or reported from this boot (a report after
   * a shutdown's would read as a machine still on), then the command runs. A command that fails
   * leaves the machine up: the agent says so and works on, and the master keeps waiting for a
   * new boot that does not come (its node shows why). */
  private async powerDown(action: PowerAction, runId: string): Promise<void> {
    const stopping = this.stopping;
    stopping.abort();
    const argv = this.d.power?.[action];
    try {
      if (!argv?.[0]) throw new Error(`this agent has no ${action} command`);
      this.d.log('info', `${action}: the run is reported completed; running ${displayCommand(argv[0], argv.slice(1))}`, { runId });
      await this.d.runner.run(argv[0], argv.slice(1), { timeoutMs: POWER_COMMAND_TIMEOUT_MS });
    } catch (err) {
      this.d.log('error', `${action} failed; the agent works on in this boot`, { runId, ...failureFields(err) });
      // Unless the agent was told to stop meanwhile (stop() also aborts this controller).
      if (this.stopping === stopping && !this.halted) {
        this.stopping = new AbortController();
        this.start();
      }
    }
  }

  /** Sends until the master answers: through no leader (503), a follower that cannot reach
   * the leader (502) or a master away, for RESULT_PATIENCE_MS; any other refusal is final. */
  private async offer(send: () => Promise<unknown>): Promise<void> {
    await throughLeaderGap(send, {
      patienceMs: RESULT_PATIENCE_MS,
      retryMs: 1_000,
      halted: () => this.halted,
      onRetry: (err) => this.d.log('warn', 'the master did not take a run result; trying again', failureFields(err)),
    });
  }

  private watchCancel(runId: string, abort: AbortController): void {
    this.d.session.call('GET', `/node/runs/${encodeURIComponent(runId)}`).then(
      ({ json }) => {
        if ((json as { canceled?: boolean }).canceled) abort.abort();
      },
      () => undefined, // the master is away: keep going, the finish call will tell
    );
  }

  private async every(signal: AbortSignal, ms: number, body: () => Promise<void>): Promise<void> {
    while (!signal.aborted) {
      await body().catch((err: unknown) => this.d.log('warn', 'heartbeat failed', failureFields(err)));
      await this.pause(signal, ms);
    }
  }

  private pause(signal: AbortSignal, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

/** Each command a step runs goes into the run's log: its command line (secrets masked) and
 * every output line (masked by the runner). */
function streamed(base: Runner, log: (level: LogLevel, message: string) => void): Runner {
  return {
    run: (cmd, args, opts) => {
      log('info', `$ ${displayCommand(cmd, args)}`);
      return base.run(cmd, args, { ...opts, onLine: (_stream, line) => log('info', line) });
    },
  };
}
