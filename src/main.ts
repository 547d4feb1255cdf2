// The composition root: config → store → tasks → fleet → runtime → loops → lab. The only
// module that knows every other; everything below it gets what it needs passed in.
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadConfig, type Config } from './config.js';
import { createLogger, outsideRequest, type Logger } from './log.js';
import { systemClock, uuid, type Clock } from './model/clock.js';
import type { SecretBox } from './store/secret-box.js';
import { prepareStateDir } from './store/state-dir.js';
import { loadSecretBox } from './store/secrets-key.js';
import type { Store } from './store/types.js';
import { EventBus, type AnyBusEvent } from './tasks/bus.js';
import { FileLogStore } from './tasks/file-logs.js';
import type { LogStore } from './tasks/logs.js';
import { TaskService } from './tasks/service.js';
import { ZxRunner } from './exec/zx-runner.js';
import { Fleet } from './fleet/fleet.js';
import { AgentGateway } from './fleet/gateway.js';
import { HeartbeatRecords } from './fleet/heartbeat-records.js';
import { BootRecords } from './fleet/boot-records.js';
import { AgentCredentials } from './fleet/credentials.js';
import { DiscoveryGuard } from './fleet/discovery-limits.js';
import type { EnrollmentOptions } from './services/boot.js';
import { taskRoutes, eventRoutes, agentRoutes } from './http/router.js';
import { uiRoutes } from './http/router.js';
import { loadUiAssets } from './http/ui-assets.js';
import { Manager } from './runtime/manager.js';
import { nodeLoop } from '../reconcilers/node/loop.js';
import { IpmitoolBmc } from './clients/bmc.js';
// Types only: the lab's modules are loaded, by lab-driver.ts, only with DRIVER=lab.
import type { Lab, LabOptions } from './sim/lab.js';
import type { LabDriver } from './main/lab-driver.js';
import { defaultCephTiming, realCeph, registerCephLoops, type CephTiming } from './main/ceph.js';
import { ensureCluster } from './services/cluster.js';
import { inventoryAreas } from './main/areas.js';
import { networkArea, type NetworkArea, type NetworkOptions } from './main/network.js';
import { provisioning } from './main/provisioning.js';
import { startImages, type ImageParts, type ImageTiming } from './main/images.js';
import { createHttpApp, type HttpApp, type Listening } from './http/app.js';
import type { AuthOptions } from './http/auth/index.js';
import { SSE_DEFAULTS, SseHub } from './http/sse/hub.js';
import { sharedEvents } from './main/event-feed.js';
import { templatesPart } from './main/templates.js';
import { s3Part, type S3Part } from './main/s3.js';
import { apiStore, startSpecs, type SpecsPart } from './main/gitops.js';
import { eventLogFields, eventLogLevel } from './main/event-log.js';
import { OSD_DF_TIMEOUT_MS } from './gitops/folder.js';
import { startRunPruning, type RunPruning } from './main/run-pruning.js';
import { openControllerStores } from './main/store.js';
import type { ProvisioningSources } from './services/template-context.js';
import { QuarryMetrics } from './metrics/quarry-metrics.js';
import { observeWrites } from './store/observed.js';
import { metricsRoutes } from './http/router.js';
import { parseFlags } from './main/flags.js';
import { hostname } from 'node:os';
import { soleLeader, type LeaderView } from './model/leadership.js';
import type { EtcdElection } from './store/election.js';

export interface QuarryOptions {
  config: Readonly<Config>;
  log?: Logger;
  clock?: Clock;
  /** Tests pass an in-memory store; by default the one STORE says (src/main/store.ts). */
  store?: Store;
  logs?: LogStore;
  /** Tests bring their own bus to see every event from the first one. */
  bus?: EventBus;
  lab?: Partial<LabOptions>;
  /** First retry delay of failed node-level runs. */
  retryBaseMs?: number;
  runTimeoutMs?: number;
  /** Timing of the Ceph loops; tests shorten it. */
  cephTiming?: Partial<CephTiming>;
  /** Tests lower the password-hashing cost; production keeps the OWASP defaults. */
  auth?: Partial<AuthOptions>;
  /** Where the generated first admin password is shown once (stdout by default). */
  print?: (line: string) => void;
  /** The key of secrets at rest; by default from SECRETS_KEY or SECRETS_KEY_FILE. */
  secrets?: SecretBox;
  network?: NetworkOptions;
  /** Progress interval, stall limit and deadline of image downloads; tests shorten them. */
  imageTiming?: Partial<ImageTiming>;
  /** The network and image answers templates and boot scripts use (tests replace them). */
  provisioning?: Partial<ProvisioningSources>;
  /** How long a spec file must hold still before it is read; tests shorten it. */
  specs?: { stableMs?: number };
  /** BMC timing of the node loop (tests shorten the power checks). */
  power?: { bmcPollMs?: number; softOffGraceMs?: number; powerOnBootMs?: number };
  /** A leader that lost its lease (STORE=etcd) has stopped its loops; then this is called (the
   * command exits, so its supervisor starts it again as a follower). By default it stops. */
  onDeposed?: (why: string) => void;
}

export interface Quarry {
  config: Readonly<Config>;
  store: Store;
  bus: EventBus;
  tasks: TaskService;
  fleet: Fleet;
  /** The agents' heartbeat records and inventories in the store (written while leading). */
  records: HeartbeatRecords;
  gateway: AgentGateway;
  manager: Manager;
  lab: Lab | null;
  http: HttpApp;
  hub: SseHub;
  network: NetworkArea;
  images: ImageParts;
  s3: S3Part;
  specs: SpecsPart;
  /** The Prometheus registry GET /metrics serves. */
  metrics: QuarryMetrics;
  /** The address the API answers on (the port is the real one when PORT=0). */
  url: string;
  /** Whether this controller leads (always, on the embedded store) and who does. */
  leader: LeaderView;
  stop(): Promise<void>;
}

export async function startQuarry(opts: QuarryOptions): Promise<Quarry> {
  const { config } = opts;
  const log = opts.log ?? createLogger(config.logLevel);
  const clock = opts.clock ?? systemClock;
  // umask 077 and a STATE_DIR nobody else can read, before anything is written to it.
  await prepareStateDir(config.stateDir, log);
  const secrets = opts.secrets ?? (await loadSecretBox(config, log));
  const metrics = new QuarryMetrics();
  const opened = opts.store
    ? { store: opts.store, loopStore: opts.store, election: null, events: null }
    : await openControllerStores(config, secrets, log);
  // Every write timed (the store write latency series), and closing it makes /readyz say no.
  const owner = observeWrites(opened.store, metrics.storeWrites);
  // Only the specs folder writes through `owner`; everyone else may not change what a file owns.
  const store = apiStore(owner);
  // The loops' and task runs' writes: with several controllers (etcd), fenced by the leadership.
  const loopStore = opened.loopStore === opened.store ? store : apiStore(observeWrites(opened.loopStore, metrics.storeWrites));
  await ensureCluster(store);
  const bus = opts.bus ?? new EventBus();
  metrics.followBus(bus);
  // Log lines stay out of /events: they would crowd state changes out of the replay buffer,
  // and GET /task/run/{id}/logs serves them.
  const streamed = (e: AnyBusEvent): boolean => e.type !== 'task.log';
  // With several controllers, /events streams the store's shared feed (src/main/event-feed.ts).
  const sharedFeed = opened.events
    ? await sharedEvents(
        opened.events({ onError: (err) => log('warn', 'events feed', { error: String(err) }) }),
        bus,
        SSE_DEFAULTS.bufferSize,
        streamed,
      )
    : null;
  metrics.provide({ store });
  const logs = opts.logs ?? new FileLogStore({ dir: join(config.stateDir, 'runs') });
  const tasks = new TaskService({
    store: loopStore,
    bus,
    logs,
    runner: new ZxRunner(),
    clock,
    ids: uuid,
    defaultTimeoutMs: opts.runTimeoutMs ?? 10 * 60_000,
    onError: (err, runId) => log('error', 'task run bookkeeping failed', { runId, error: String(err) }),
  });
  const fleet = new Fleet(clock, config.heartbeatTimeoutMs);
  // What the agents say, kept in the store (by the leader, batched) for the next leader.
  const records = new HeartbeatRecords({
    store: loopStore,
    fleet,
    clock,
    heartbeatTimeoutMs: config.heartbeatTimeoutMs,
    onError: (err) => log('warn', 'writing the heartbeat records failed (tried again)', { error: String(err) }),
  });
  fleet.listen(records);
  // Boots any controller answers reach the leader's Fleet through the store. One controller
  // (embedded store) answers every boot itself: they stay in its memory alone, as they always
  // did, with no journal write per boot request.
  const boots = opened.election
    ? new BootRecords({
        store,
        leaderStore: loopStore,
        fleet,
        unapprovedTtlMs: config.unapprovedNodeTtlMs,
        warn: (message, fields) => log('warn', message, fields),
      })
    : null;
  if (boots) fleet.listenBoots(boots);
  // When this controller began to lead (its start, on the embedded store); lead() sets it.
  let leadingSince = clock.now();
  const manager = new Manager({
    store: loopStore,
    concurrency: config.reconcileConcurrency,
    resyncMs: config.resyncMs,
    log,
    clock,
    observer: metrics.reconciles,
  });
  metrics.provide({ queueDepths: () => manager.queueDepths() });
  const credentials = new AgentCredentials(store, clock, {
    ttlMs: config.installCredentialTtlMs,
    onConflict: (nodeId, message, node) => {
      const names = { hostname: node?.hostname ?? null, name: node?.name ?? null };
      log('warn', 'agent credential conflict: the node needs an admin to approve it again', { nodeId, ...names, message });
      bus.publish('node.credential.conflict', { nodeId, message, ...names });
    },
  });
  // Unclaimed install credentials past their TTL leave the store (no plaintext lingers).
  const sweeper = setInterval(
    () => void credentials.sweep().catch((err: unknown) => log('error', 'credential sweep failed', { error: String(err) })),
    Math.min(config.installCredentialTtlMs, 60_000),
  );
  sweeper.unref();
  // The lab's pieces, loaded only with DRIVER=lab: a real start never loads src/sim.
  const labParts: LabDriver | null =
    config.driver === 'lab' ? (await import('./main/lab-driver.js')).labDriver(opts.lab?.seed ?? 42, opts.lab?.ceph, config.labUrl) : null;
  const images = await startImages({
    config,
    store,
    loopStore,
    tasks,
    bus,
    clock,
    retryBaseMs: opts.retryBaseMs ?? 5_000,
    ...(opts.imageTiming ? { timing: opts.imageTiming } : {}),
    ...(labParts ? { labRegistry: labParts.imageRegistry } : {}),
  });
  const boot = await provisioning({ config, store, images: images.images, clock, log, secrets });
  const templates = await templatesPart({ store, clock, config, credentials, sources: { ...boot.sources, ...opts.provisioning }, log });
  const {
    ceph,
    rgw,
    close: closeCeph,
  } = labParts ? { ...labParts.ceph(store), close: async () => undefined } : realCeph(config.stateDir, store, templates.render);
  const cephTiming = { ...defaultCephTiming(config.driver), ...opts.cephTiming };
  manager.register(
    nodeLoop({
      store: loopStore,
      fleet,
      tasks,
      bus,
      clock,
      // Agents are heard from the leadership on: until then a follower relayed them elsewhere.
      startedAt: () => leadingSince,
      heartbeatTimeoutMs: config.heartbeatTimeoutMs,
      retryBaseMs: opts.retryBaseMs ?? 5_000,
      runTimeoutMs: opts.runTimeoutMs ?? 5 * 60_000,
      // Restarting or shutting down a node stops its OSDs: Ceph's ok-to-stop gates it.
      ceph,
      cephQueryTimeoutMs: cephTiming.queryTimeoutMs,
      disruptionRecheckMs: cephTiming.blockedRecheckMs,
      notes: tasks,
      bootLoop: { maxBoots: config.bootLoopMaxBoots, windowMs: config.bootLoopWindowMs },
      unapprovedTtlMs: config.unapprovedNodeTtlMs,
      // Power through each node's BMC: the lab's, or ipmitool on the master.
      bmc: labParts?.bmcs ?? new IpmitoolBmc(new ZxRunner()),
      softOffGraceMs: config.bmcSoftOffGraceMs,
      powerOnBootMs: config.powerOnBootMs,
      fenceAfterMs: config.fenceAfterMs,
      ...opts.power,
    }),
  );
  registerCephLoops(manager, {
    store: loopStore,
    tasks,
    clock,
    ceph,
    rgw,
    retryBaseMs: opts.retryBaseMs ?? 5_000,
    runTimeoutMs: opts.runTimeoutMs ?? 5 * 60_000,
    ...cephTiming,
    diskGoneGraceMs: config.diskGoneGraceMs,
    bus,
  });
  manager.register(images.loop);
  // dnsmasq.conf is a template like any other: an operator's edit reaches the DHCP servers.
  const network = networkArea({
    render: templates.render,
    ...opts.network,
    sim: labParts?.master(join(config.stateDir, 'dnsmasq'), () => clock.now()) ?? null,
    config,
    store,
    loopStore,
    tasks,
    manager,
    clock,
    retryBaseMs: opts.retryBaseMs ?? 5_000,
    runTimeoutMs: opts.runTimeoutMs ?? 60_000,
  });
  // An agent's report wakes the node loop from inside the agent's request: the loop's work (and
  // the work queue's next items) must not carry that request's id.
  let election: EtcdElection | null = null;
  fleet.onChange((nodeId) => outsideRequest(() => manager.enqueue('node', nodeId)));
  // What only the leader runs: the loops and the task runs. One controller (embedded store)
  // leads from the start; with etcd, once elected (after it listens: followers serve the API).
  let pruner: RunPruning | null = null;
  let stopSweeping: (() => void) | null = null;
  let heardNodes = 0;
  let interruptedRuns = 0;
  const lead = async (): Promise<void> => {
    leadingSince = clock.now();
    // First: the failed runs recover() reports are news for every controller's clients.
    await sharedFeed?.lead();
    // What the previous leader (or this one's last run) heard, before the loops look at a node.
    heardNodes = await records.start();
    // After the heartbeats: whether a boot counts depends on when the agent last reported.
    await boots?.lead();
    // Nodes whose reports go stale wake the node loop (it keeps no staleness timers itself).
    stopSweeping = fleet.startSweeping();
    // Runs cut short by a crash (or left by a dead leader) are failed; their objects look again.
    const interrupted = await tasks.recover();
    interruptedRuns = interrupted.length;
    pruner = startRunPruning(tasks, config, log);
    await manager.start();
    for (const t of interrupted) for (const loop of manager.loopsFor(t.kind)) manager.enqueue(loop, t.id);
  };
  if (!opened.election) await lead();
  const gateway = new AgentGateway(store, fleet, tasks.agents, credentials);
  const specs = await startSpecs({
    config,
    store: owner,
    sources: { interfaces: network.host, registry: images.registry },
    bus,
    log,
    osdDf: () => ceph.osdDf({ timeoutMs: OSD_DF_TIMEOUT_MS }),
    poolDf: async () => (await ceph.df({ timeoutMs: OSD_DF_TIMEOUT_MS })).pools,
    ...opts.specs,
  });
  // The folder is the leader's: with several controllers it is watched once elected.
  if (!opened.election) specs.watch();
  const s3 = s3Part({ store, lab: labParts?.s3Gateways() ?? null, fleet });
  const hub = new SseHub(
    sharedFeed?.source ?? { subscribe: (h) => bus.subscribe((e) => streamed(e) && h(e)), lastSeq: () => bus.lastSeq() },
  );
  metrics.provide({ sseClients: () => hub.stats().clients });
  // The election starts once the API listens (it advertises the URL); until then a controller
  // on etcd neither leads nor knows who does.
  let selfUrl: string | null = null;
  const leader: LeaderView = opened.election
    ? { isLeader: () => election?.isLeader() ?? false, leaderUrl: () => election?.leaderUrl() ?? null }
    : soleLeader(() => selfUrl);
  const http = await createHttpApp({
    leader,
    store,
    config,
    logger: log,
    clock,
    areas: [
      taskRoutes(tasks),
      eventRoutes(hub),
      ...inventoryAreas(store, clock, templates, tasks, () => specs.folder.status()),
      (area) => agentRoutes(gateway, area.auth),
      templates.routes({ fleet, credentials, enrollment: enrollmentOptions(config, network.host.dhcp, clock) }),
      network.routes,
      images.routes,
      boot.routes,
      s3.routes,
      specs.routes,
      metricsRoutes(metrics),
      // The dashboard, built next to the server (dist/ui beside dist/src).
      uiRoutes(await loadUiAssets(fileURLToPath(new URL('../ui/', import.meta.url)))),
    ],
    // A follower is ready: it serves the API, boots and agents (forwarded) without the loops.
    ready: () => owner.isOpen() && (manager.running() || (election !== null && !election.isLeader())),
    observer: metrics.requests,
    ...(opts.auth ? { auth: opts.auth } : {}),
    ...(opts.print ? { print: opts.print } : {}),
    agents: credentials,
    secrets,
  });
  const listening: Listening = await http.listen(config.port, config.host);
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${listening.port}`;
  selfUrl = url;
  await network.listening(listening.port);
  // Machines boot only once the master answers, as on a real network; their agents speak
  // HTTP to it (over loopback when it listens on every address).
  const labHost =
    config.host === '0.0.0.0' ? '127.0.0.1' : config.host === '::' ? '[::1]' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const labOptions = {
    nodes: config.labNodes,
    masterUrl: `http://${labHost}:${listening.port}`,
    diskDir: join(config.stateDir, 'lab'),
    dhcp: network.sim,
    ...opts.lab,
  };
  const lab = labParts?.lab(gateway, labOptions) ?? null;
  const unsubscribe = bus.subscribe((e) => {
    if (e.type !== 'task.log') log(eventLogLevel(e), e.type, eventLogFields(e));
  });
  // Read by the election's callbacks, set by stop().
  const life: { stopping: boolean; stopped?: Promise<void> } = { stopping: false };
  if (opened.election && config.etcd) {
    const me = { id: `${hostname()}-${process.pid}-${uuid().slice(0, 8)}`, url: config.etcd.advertiseUrl ?? url };
    election = opened.election({
      me,
      ttlSeconds: config.etcd.leaderLeaseTtlS,
      onLost: (why) => {
        log('error', 'leadership lost: this controller stops its loops', { why });
        void records.stop();
        boots?.stopLeading();
        void manager.stop();
        (opts.onDeposed ?? (() => void quarry.stop()))(why);
      },
      onError: (err) => log('warn', 'leader election', { error: String(err) }),
      onLeader: (r) => log('info', 'leader', { controller: me.id, leader: r?.id ?? null, leaderUrl: r?.url ?? null }),
    });
    const campaign = election;
    void (async () => {
      try {
        await campaign.campaign();
      } catch (err) {
        if (!life.stopping) log('error', 'leader election failed', { error: String(err) });
        return;
      }
      if (life.stopping) return;
      const t0 = performance.now();
      try {
        await lead();
        specs.watch();
        await network.listening(listening.port);
      } catch (err) {
        // Elected but unable to take over (etcd went away meanwhile): give the key back for
        // another controller rather than lead without loops.
        log('error', 'taking over the loops failed: resigning', { error: String(err) });
        await records.stop();
        boots?.stopLeading();
        await manager.stop();
        await campaign.stop().catch(() => undefined);
        (opts.onDeposed ?? (() => void quarry.stop()))(String(err));
        return;
      }
      // The lab's machines are this controller's: they start with its leadership.
      lab?.start();
      log('info', 'elected: this controller leads', {
        controller: me.id,
        interruptedRuns,
        heardNodes,
        startMs: Math.round(performance.now() - t0),
      });
    })();
  } else lab?.start();
  log('info', 'quarry started', { url, driver: config.driver, labNodes: lab ? config.labNodes : 0, interruptedRuns, store: config.store });
  const quarry: Quarry = {
    config,
    store,
    bus,
    tasks,
    fleet,
    records,
    gateway,
    manager,
    lab,
    http,
    hub,
    network,
    images,
    s3,
    specs,
    metrics,
    url,
    leader,
    // Once: a deposed leader stops itself, and its owner may stop it too.
    stop() {
      life.stopping = true;
      return (life.stopped ??= (async () => {
        clearInterval(sweeper);
        stopSweeping?.();
        await pruner?.stop();
        lab?.stop();
        await specs.stop();
        hub.close();
        await sharedFeed?.close();
        await listening.close();
        http.auth.close();
        unsubscribe();
        // What fell due is written while this controller still leads (the writes are fenced).
        await records.stop(true);
        // The boots answered until the API closed, written before the store closes.
        await boots?.stop();
        await manager.stop();
        // Given up once the loops stopped: the next leader need not wait out the lease.
        await election?.stop().catch((err: unknown) => log('warn', 'resigning the leadership failed', { error: String(err) }));
        await network.stop();
        await images.stop();
        await s3.stop();
        await closeCeph();
        await templates.close();
        await tasks.close();
        await logs.close();
        metrics.close();
        await store.close();
      })());
    },
  };
  return quarry;
}

function enrollmentOptions(config: Readonly<Config>, leases: EnrollmentOptions['leases'], clock: Clock): EnrollmentOptions {
  const limits = { maxUnapproved: config.maxUnapprovedNodes, burst: config.discoveryBurst, perMinute: config.discoveryPerMinute };
  return {
    leases,
    guard: new DiscoveryGuard(limits, clock),
    autoApproveDeclared: config.autoApproveDeclared,
    retrySeconds: config.approvalRetrySeconds,
  };
}

async function main(): Promise<void> {
  // --help, --version, or an unknown flag: answered here, before any state or port is touched.
  const flags = parseFlags(process.argv.slice(2), process.env);
  if (flags.exit) {
    (flags.exit.code === 0 ? process.stdout : process.stderr).write(flags.exit.text);
    process.exitCode = flags.exit.code;
    return;
  }
  const config = loadConfig(flags.env);
  // Read once into config: commands Quarry runs (ceph, dnsmasq, ...) inherit the environment.
  delete process.env.SECRETS_KEY;
  const log = createLogger(config.logLevel);
  // The handlers are in place before the start: a signal that arrives while Quarry starts (or
  // just after it says it started) stops it cleanly instead of killing it mid-write.
  let quarry: Quarry | null = null;
  let stopping: string | null = null;
  const stop = (q: Quarry) =>
    q.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log('error', 'stop failed', { error: String(err) });
        process.exit(1);
      },
    );
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = signal;
    log('info', 'stopping', { signal });
    if (quarry) void stop(quarry);
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  // A deposed leader exits non-zero once stopped: its supervisor starts it again, as a follower.
  const deposed = (): void => {
    if (stopping || !quarry) return;
    stopping = 'deposed';
    void quarry.stop().finally(() => process.exit(1));
  };
  quarry = await startQuarry({ config, log, onDeposed: deposed });
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a signal handler sets it while startQuarry is awaited
  if (stopping) await stop(quarry);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`quarry: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
