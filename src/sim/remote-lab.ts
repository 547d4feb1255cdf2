// A controller's side of the lab in its own process (LAB_URL; lab-server.ts is the other side):
// the Ceph CLI's command lines run there through a Runner, so the controller's real
// CephClient/RgwAdmin build and parse them exactly as with the in-process lab; the BMCs' IPMI
// verbs and the S3 gateways' addresses are asked for. What comes back is checked before use.
import { readFile, writeFile } from 'node:fs/promises';
import { BmcError, type BmcApi, type BmcCall, type BmcTarget, type PowerState } from '../clients/bmc.js';
import type { CephClientOptions } from '../clients/ceph.js';
import { CommandError } from '../errors.js';
import {
  bmcAnswerProblem,
  cephAnswerProblem,
  type BmcAnswer,
  type BmcVerb,
  type CephRunAnswer,
  type CephRunRequest,
} from './lab-protocol.js';

type Runner = CephClientOptions['runner'];
type Arg = Parameters<Runner['run']>[1][number];
type RunOptions = Parameters<Runner['run']>[2];
type RunOutput = Awaited<ReturnType<Runner['run']>>;

/** Beyond a command's own deadline, what the lab's answer may take on the way back. */
const TRANSIT_MS = 5_000;

async function post<T>(base: string, path: string, body: unknown, problem: (a: unknown) => string | null, signal: AbortSignal): Promise<T> {
  const res = await fetch(new URL(path, base), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  const answer = await res.json();
  if (res.status !== 200) throw new Error(`the lab refused ${path}: ${JSON.stringify(answer).slice(0, 300)}`);
  const why = problem(answer);
  if (why) throw new Error(`the lab's answer to ${path} is malformed: ${why}`);
  return answer as T;
}

const plain = (a: Arg): string => (typeof a === 'string' ? a : a.secret);

/** Who a command line calls as (`-n`, `--id`) and the keyring it names (`-k`), as the CLI reads
 * its global flags; the verb's own words are not looked at. */
function caller(args: Arg[]): { name: string; keyring: string | undefined } {
  let name = 'client.admin';
  let keyring: string | undefined;
  for (let i = 0; i < args.length - 1; i++) {
    const a = plain(args[i]!);
    const v = plain(args[i + 1]!);
    if (a === '-n' || a === '--name') name = v;
    if (a === '--id') name = `client.${v}`;
    if (a === '-k' || a === '--keyring') keyring = v;
  }
  return { name, keyring };
}

export class RemoteCephRunner implements Runner {
  constructor(
    private readonly base: string,
    /** The key the master shows for an entity without a keyring file (its client.admin key). */
    private readonly keyOf: (entity: string) => Promise<string | undefined>,
  ) {}

  async run(cmd: string, args: Arg[], opts: RunOptions): Promise<RunOutput> {
    const shown = [cmd, ...args.map((a) => (typeof a === 'string' ? a : '***'))].join(' ');
    if (cmd !== 'ceph' && cmd !== 'radosgw-admin') throw new CommandError(shown, 127, `${cmd}: command not found`);
    const who = caller(args);
    const req: CephRunRequest = { cmd, args, timeoutMs: Math.max(1, Math.ceil(opts.timeoutMs)) };
    if (opts.input !== undefined) req.input = opts.input.toString();
    if (who.keyring === undefined) {
      const key = await this.keyOf(who.name);
      if (key !== undefined) req.key = key;
    } else {
      // A keyring that cannot be read shows no key, as the CLI's would.
      const text = await readFile(who.keyring, 'utf8').catch(() => undefined);
      if (text !== undefined) req.keyrings = { [who.keyring]: text };
    }
    const deadline = AbortSignal.timeout(opts.timeoutMs + TRANSIT_MS);
    const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
    let a: CephRunAnswer;
    try {
      a = await post<CephRunAnswer>(this.base, '/ceph/run', req, cephAnswerProblem, signal);
    } catch (err) {
      throw new CommandError(shown, null, `the lab at ${this.base} did not answer: ${err instanceof Error ? err.message : String(err)}\n`);
    }
    // `mon getmap -o FILE` wrote a file: on this side, where the caller reads it.
    for (const [path, data] of Object.entries(a.files)) await writeFile(path, Buffer.from(data, 'base64'));
    if (opts.onLine) {
      for (const line of (a.ok ? a.stdout : '').split('\n').filter((l) => l !== '')) opts.onLine('stdout', line);
      for (const line of a.stderr.split('\n').filter((l) => l !== '')) opts.onLine('stderr', line);
    }
    if (a.ok) return { stdout: a.stdout, stderr: a.stderr, exitCode: 0 };
    const err = new CommandError(shown, a.exitCode, a.stderr, a.signal);
    err.message = a.message;
    throw err;
  }
}

export class RemoteBmcs implements BmcApi {
  constructor(private readonly base: string) {}

  async powerStatus(t: BmcTarget, call: BmcCall): Promise<PowerState> {
    return (await this.call('status', t, call)).power ?? 'off';
  }

  async powerOn(t: BmcTarget, call: BmcCall): Promise<void> {
    await this.call('on', t, call);
  }

  async powerOff(t: BmcTarget, call: BmcCall): Promise<void> {
    await this.call('off', t, call);
  }

  async powerCycle(t: BmcTarget, call: BmcCall): Promise<void> {
    await this.call('cycle', t, call);
  }

  private async call(verb: BmcVerb, t: BmcTarget, call: BmcCall): Promise<Extract<BmcAnswer, { ok: true }>> {
    const body = { address: t.address, port: t.port, username: t.username, password: t.password };
    const signal = call.signal ? AbortSignal.any([call.signal, AbortSignal.timeout(60_000)]) : AbortSignal.timeout(60_000);
    let a: BmcAnswer;
    try {
      a = await post<BmcAnswer>(this.base, `/bmc/${verb}`, body, bmcAnswerProblem, signal);
    } catch (err) {
      throw new BmcError(t, `no answer from the lab: ${err instanceof Error ? err.message : String(err)}`);
    }
    for (const line of a.log) call.log?.('info', line);
    if (!a.ok) throw new BmcError(t, a.why);
    return a;
  }
}

/** The lab's S3 gateways: where each listens (on the lab's side). */
export class RemoteS3Gateways {
  constructor(private readonly base: string) {}

  async url(name: string): Promise<string> {
    const res = await fetch(new URL(`/s3/url?name=${encodeURIComponent(name)}`, this.base), { signal: AbortSignal.timeout(10_000) });
    const a = (await res.json()) as { url?: unknown };
    if (res.status !== 200 || typeof a.url !== 'string') throw new Error(`the lab has no S3 gateway ${name}`);
    return a.url;
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }
}
