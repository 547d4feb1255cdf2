// The lab in a process of its own, over loopback HTTP: its simulated Ceph answers the command
// lines the controllers' CephClient/RgwAdmin build (POST /ceph/run), its BMCs the IPMI verbs
// (POST /bmc/{verb}), its S3 gateways say where they listen (GET /s3/url), and its machines boot
// once told which controllers to speak to (POST /lab/start). GET /lab/state is what tests check
// the world against. Every body is checked (lab-protocol.ts): the callers are other processes.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BmcError, type BmcTarget } from '../clients/bmc.js';
import { CommandError } from '../errors.js';
import type { MasterLink } from '../fleet/protocol.js';
import { SimBmcs } from './bmc.js';
import { SimCephCluster } from './ceph/cluster.js';
import { SimCephRunner } from './ceph/runner.js';
import { Lab, type LabOptions } from './lab.js';
import {
  BMC_VERBS,
  MAX_BODY_BYTES,
  bmcProblem,
  cephRunProblem,
  startProblem,
  type BmcAnswer,
  type BmcRequest,
  type BmcVerb,
  type CephRunAnswer,
  type CephRunRequest,
  type LabStartRequest,
  type LabState,
} from './lab-protocol.js';
import { seeded } from './random.js';
import { LabS3Gateways } from './s3/gateway.js';

export type LabServerOptions = Omit<LabOptions, 'link' | 'masterUrl' | 'masterUrls' | 'ceph' | 'bmcs' | 'dhcp'>;

/** Machines over HTTP ask the master nothing in-process; an image fetch is a file download
 * the lab does not simulate, so it records nothing. */
const remoteMaster: MasterLink = {
  pxeBoot: () => Promise.reject(new Error('the lab process reaches its controllers over HTTP')),
  fetchImage: () => Promise.resolve(),
  report: () => Promise.reject(new Error('the lab process reaches its controllers over HTTP')),
  claim: () => Promise.reject(new Error('the lab process reaches its controllers over HTTP')),
  log: () => Promise.reject(new Error('the lab process reaches its controllers over HTTP')),
  finish: () => Promise.reject(new Error('the lab process reaches its controllers over HTTP')),
};

class BadRequest extends Error {}

export class LabServer {
  readonly cluster: SimCephCluster;
  readonly bmcs = new SimBmcs();
  readonly gateways: LabS3Gateways;
  lab: Lab | null = null;
  private server: Server | null = null;

  constructor(private readonly opts: LabServerOptions) {
    this.cluster = new SimCephCluster({ random: seeded((opts.seed ?? 42) + 2) });
    this.gateways = new LabS3Gateways(this.cluster);
  }

  /** Listens on loopback; answers its URL. */
  async listen(port = 0, host = '127.0.0.1'): Promise<string> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const a = server.address() as AddressInfo;
    return `http://${host.includes(':') ? `[${host}]` : host}:${a.port}`;
  }

  /** Powers the machines on, speaking to these controllers (the first one first). */
  start(req: LabStartRequest): void {
    if (this.lab) throw new BadRequest('the lab has started already');
    this.lab = new Lab(remoteMaster, { ...this.opts, masterUrls: req.controllers, ceph: this.cluster, bmcs: this.bmcs });
    this.lab.start();
  }

  async stop(): Promise<void> {
    this.lab?.stop();
    await this.gateways.stop();
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  state(): LabState {
    const machines = (this.lab?.machines ?? []).map((m) => ({
      index: m.spec.index,
      mac: m.spec.mac,
      nodeId: m.nodeId,
      hostname: m.hostname,
      powered: m.powered,
      bootId: m.bootId,
    }));
    const osds = [...this.cluster.osdmap.osds.values()].map((o) => ({
      id: o.id,
      uuid: o.uuid,
      host: o.host ?? null,
      devicePath: o.devicePath ?? null,
      up: o.up,
    }));
    return { machines, osds, steps: this.lab?.stepLog ?? [], boots: this.lab?.bootLog ?? [], bmcCalls: this.bmcs.calls };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://lab');
      const answer = await this.route(req.method ?? 'GET', url, req, res);
      send(res, 200, answer);
    } catch (err) {
      send(res, err instanceof BadRequest ? 400 : 500, { error: err instanceof Error ? err.message : String(err) });
    }
  }

  private async route(method: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<unknown> {
    const path = url.pathname;
    if (method === 'GET' && path === '/lab/state') return this.state();
    if (method === 'GET' && path === '/s3/url') {
      const name = url.searchParams.get('name') ?? '';
      if (!/^[a-z0-9][a-z0-9.-]{0,62}$/i.test(name)) throw new BadRequest('name must be a hostname');
      return { url: await this.gateways.url(name) };
    }
    if (method !== 'POST') throw new BadRequest(`no ${method} ${path}`);
    const body = await readJson(req);
    if (path === '/lab/start') {
      checked(startProblem(body));
      this.start(body as LabStartRequest);
      return { started: true };
    }
    if (path === '/ceph/run') {
      checked(cephRunProblem(body));
      return this.cephRun(body as CephRunRequest, res);
    }
    const verb = /^\/bmc\/([a-z]+)$/.exec(path)?.[1];
    if (verb && (BMC_VERBS as readonly string[]).includes(verb)) {
      checked(bmcProblem(body));
      return this.bmc(verb as BmcVerb, body as BmcRequest);
    }
    throw new BadRequest(`no POST ${path}`);
  }

  private async cephRun(r: CephRunRequest, res: ServerResponse): Promise<CephRunAnswer> {
    // A controller that hangs up (killed, or its deadline passed) kills its command, as a
    // killed ceph CLI would be.
    const gone = new AbortController();
    res.once('close', () => res.writableFinished || gone.abort());
    const files: Record<string, string> = {};
    const runner = new SimCephRunner(this.cluster, {
      keyOf: () => Promise.resolve(r.key),
      readFile: (p) => (r.keyrings?.[p] === undefined ? Promise.reject(new Error(`${p}: no such file`)) : Promise.resolve(r.keyrings[p])),
      writeFile: (p, d) => Promise.resolve(void (files[p] = Buffer.from(d).toString('base64'))),
    });
    try {
      const out = await runner.run(r.cmd, r.args, {
        timeoutMs: r.timeoutMs,
        signal: gone.signal,
        ...(r.input === undefined ? {} : { input: r.input }),
      });
      return { ok: true, stdout: out.stdout, stderr: out.stderr, files };
    } catch (err) {
      if (!(err instanceof CommandError)) throw err;
      return { ok: false, exitCode: err.exitCode, stderr: err.stderr, signal: err.signal, message: err.message, files };
    }
  }

  private async bmc(verb: BmcVerb, t: BmcTarget): Promise<BmcAnswer> {
    const log: string[] = [];
    const call = { log: (_level: string, message: string) => void log.push(message) };
    try {
      if (verb === 'status') return { ok: true, power: await this.bmcs.powerStatus(t, call), log };
      await (verb === 'on' ? this.bmcs.powerOn(t, call) : verb === 'off' ? this.bmcs.powerOff(t, call) : this.bmcs.powerCycle(t, call));
      return { ok: true, log };
    } catch (err) {
      if (!(err instanceof BmcError)) throw err;
      // The controller's BmcError names the BMC again: only the reason travels.
      const named = `BMC ${t.address}:${t.port} (user ${t.username}): `;
      return { ok: false, why: err.message.startsWith(named) ? err.message.slice(named.length) : err.message, log };
    }
  }
}

function checked(problem: string | null): void {
  if (problem) throw new BadRequest(problem);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BadRequest(`the body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new BadRequest('the body is not JSON');
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
