// The lab in its own process, through its HTTP face (src/sim/lab-server.ts) and the
// controller's clients of it (src/sim/remote-lab.ts): what crosses the process boundary is
// checked, the CLI's failures and the BMCs' refusals come back as the errors the loops expect,
// and a machine's requests move on to the next controller when one refuses connections.
import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BmcError } from '../../src/clients/bmc.js';
import { CephClient } from '../../src/clients/ceph.js';
import { CommandError } from '../../src/errors.js';
import { LabServer } from '../../src/sim/lab-server.js';
import { RemoteBmcs, RemoteCephRunner } from '../../src/sim/remote-lab.js';
import { FailoverFetch } from '../../src/sim/failover-fetch.js';
import { labBmcTarget } from '../../src/sim/bmc.js';

async function lab(t: { teardown(fn: () => Promise<void>): void }): Promise<{ server: LabServer; url: string }> {
  const server = new LabServer({ nodes: 0 });
  const url = await server.listen();
  t.teardown(() => server.stop());
  return { server, url };
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('lab server refuses what is not a command line, a BMC call or a list of loopback controllers', async (t) => {
  const { url } = await lab(t);
  const bad: Array<[string, unknown]> = [
    ['/ceph/run', { cmd: 'rm', args: ['-rf', '/'], timeoutMs: 1000 }],
    ['/ceph/run', { cmd: 'ceph', args: [{ secret: 'x', more: 1 }], timeoutMs: 1000 }],
    ['/ceph/run', { cmd: 'ceph', args: ['status'], timeoutMs: 0 }],
    ['/ceph/run', { cmd: 'ceph', args: ['status'], timeoutMs: 1000, keyrings: { '/k': 1 } }],
    ['/bmc/status', { address: '198.51.100.2', port: 0, username: 'u', password: 'p' }],
    ['/bmc/reboot', { address: '198.51.100.2', port: 623, username: 'u', password: 'p' }],
    ['/lab/start', { controllers: ['http://10.0.0.1:8080'] }],
    ['/lab/start', { controllers: [] }],
  ];
  for (const [path, body] of bad) t.is((await post(`${url}${path}`, body)).status, 400, `${path} ${JSON.stringify(body)}`);
  t.is((await fetch(`${url}/ceph/run`, { method: 'POST', body: 'not json' })).status, 400);
});

test("remote ceph runner: the lab's CLI failure comes back as the CommandError the client parses", async (t) => {
  const { url } = await lab(t);
  const ceph = new CephClient({
    runner: new RemoteCephRunner(url, () => Promise.resolve(undefined)),
    conf: '/etc/ceph/ceph.conf',
    name: 'client.admin',
  });
  // No monitor yet: the CLI gives up after its connect timeout, as the real one does.
  const err = await t.throwsAsync(() => ceph.status({ timeoutMs: 2_500 }), { instanceOf: CommandError });
  t.regex(err.stderr, /authenticate timed out after 1/);
  t.regex(err.message, /exited with 1: \[errno 110\] RADOS timed out/);
  t.is(err.exitCode, 1);
});

test('remote BMCs: a BMC the lab does not have is no answer, with the reason and never the password', async (t) => {
  const { url } = await lab(t);
  const target = labBmcTarget(1);
  const err = await t.throwsAsync(() => new RemoteBmcs(url).powerStatus(target, {}), { instanceOf: BmcError });
  t.regex(err.message, /^BMC 198\.51\.100\.2:623 \(user quarry\): no answer: Error: Unable to establish IPMI v2/);
  t.false(err.message.includes(target.password));
});

test('failover fetch: a controller that refuses connections is passed over for the next one', async (t) => {
  const up = createServer((_req, res) => res.end('up'));
  await new Promise<void>((r) => up.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => up.close(() => r())));
  const dead = createServer();
  await new Promise<void>((r) => dead.listen(0, '127.0.0.1', () => r()));
  const deadPort = (dead.address() as AddressInfo).port;
  await new Promise<void>((r) => dead.close(() => r()));
  const to = new FailoverFetch([`http://127.0.0.1:${deadPort}`, `http://127.0.0.1:${(up.address() as AddressInfo).port}`], fetch);
  t.is(await (await to.fetch(new URL('/x', to.base))).text(), 'up');
  // It stays with the one that answered.
  t.is(await (await to.fetch(new URL('/y', to.base))).text(), 'up');
});
