// The composition root's network part: which master the network loop drives (the lab's
// simulated one from lab-driver.ts, or the real interfaces and dnsmasq, maybe inside MASTER_NETNS), the loop,
// and the /networks routes. Only the root imports this.
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { MasterHost } from '../clients/dhcp.js';
import { DnsmasqServers } from '../clients/dnsmasq.js';
import { IpClient } from '../clients/ip.js';
import { NodeProcessSupervisor } from '../exec/supervisor.js';
import { ZxRunner } from '../exec/zx-runner.js';
import type { Clock } from '../model/clock.js';
import { NetworkKind } from '../model/network-kinds.js';
import { defaultTemplatesDir } from '../render/ceph-conf.js';
import { fileTemplates, type RenderTemplate } from '../render/template-file.js';
import type { Manager } from '../runtime/manager.js';
import type { Store } from '../store/types.js';
import type { TaskService } from '../tasks/service.js';
import type { SimMaster } from '../sim/master.js';
import { Networks } from '../services/networks.js';
import { networkRoutes } from '../http/router.js';
import type { AnyRoute } from '../http/route.js';
import { networkLoop } from '../../reconcilers/network/loop.js';

export interface NetworkOptions {
  /** How templates/dnsmasq.conf.ejs is rendered; ejs over the file by default. */
  render?: RenderTemplate;
  pollMs?: number;
}

export interface NetworkDeps extends NetworkOptions {
  config: Readonly<Config>;
  store: Store;
  /** The loop's writes: fenced by the leadership when controllers share etcd (src/main.ts). */
  loopStore?: Store;
  tasks: TaskService;
  manager: Manager;
  clock: Clock;
  retryBaseMs: number;
  runTimeoutMs: number;
  /** The lab's simulated master (lab-driver.ts); the real interfaces and dnsmasq without it. */
  sim?: SimMaster | null;
}

export interface NetworkArea {
  host: MasterHost;
  /** The lab's master, for tests to unplug NICs and kill servers; null with DRIVER=real. */
  sim: SimMaster | null;
  routes: AnyRoute[];
  /** Quarry listens: machines can now be sent to it. */
  listening(port: number): Promise<void>;
  stop(): Promise<void>;
}

function realMaster(config: Readonly<Config>): MasterHost {
  const ip = new IpClient({ runner: new ZxRunner(), netns: config.masterNetns });
  const dhcp = new DnsmasqServers({
    supervisor: new NodeProcessSupervisor(),
    dir: join(config.stateDir, 'dnsmasq'),
    netns: config.masterNetns,
  });
  return { interfaces: () => ip.interfaces(), dhcp };
}

/** Registers the network loop; call before the manager starts. */
export function networkArea(deps: NetworkDeps): NetworkArea {
  const { config, manager } = deps;
  const sim = deps.sim ?? null;
  const host = sim ?? realMaster(config);
  let port: number | null = null;
  manager.register(
    networkLoop({
      store: deps.loopStore ?? deps.store,
      tasks: deps.tasks,
      host,
      render: deps.render ?? fileTemplates(defaultTemplatesDir),
      clock: deps.clock,
      port: () => port,
      // Debian's ipxe package puts undionly.kpxe here, world-readable: dnsmasq serves TFTP as
      // nobody, who cannot enter STATE_DIR (0700).
      tftpRoot: '/usr/lib/ipxe',
      retryBaseMs: deps.retryBaseMs,
      runTimeoutMs: deps.runTimeoutMs,
      pollMs: deps.pollMs ?? 5_000,
    }),
  );
  // A server that dies wakes its network at once; the loop decides when to restart it.
  host.dhcp.onExit((id) => manager.enqueue('network', id));
  return {
    host,
    sim,
    routes: networkRoutes(new Networks(deps.store, host)),
    async listening(p) {
      port = p;
      for (const n of await deps.store.list(NetworkKind.Network)) manager.enqueue('network', n.id);
    },
    stop: () => host.dhcp.stopAll(),
  };
}
