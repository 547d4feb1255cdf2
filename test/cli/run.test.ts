// The CLI's command tree and exit codes against a fake server: the token on every call, problem
// details printed, each failure its exit code.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bashCompletion, zshCompletion } from '../../src/cli/commands/completion.js';
import { buildProgram } from '../../src/cli/program.js';
import { configHome, quarry, runCli } from './helpers.js';
import { fakeServer } from './fake-server.js';

const NODES = [
  {
    id: '4a1d37ee-2216-5697-b88f-bc9995bc90f5',
    hostname: 'node-1',
    name: 'storage-1',
    role: 'worker',
    ip: '10.0.0.1',
    status: 'active',
    diskCount: 5,
    osdCount: 3,
    createdAt: '2026-01-01T00:00:00.000Z',
    ready: { ready: true, reason: 'AgentReporting', message: '' },
    daemonsReady: [{ type: 'mon', phase: 'running', ready: true, reason: 'Running', message: '' }],
  },
];

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

test('cli login trades the password for a token stored 0600 in a 0700 directory; calls then send it; logout revokes it', async (t) => {
  const f = await fakeServer({
    'POST /user/login': (r) =>
      (JSON.parse(r.body) as { password: string }).password === 'pw-secret-1'
        ? {
            json: { id: 'u', username: 'admin' },
            headers: { 'set-cookie': ['access_token=AT; Path=/; HttpOnly', 'refresh_token=RT; Path=/; HttpOnly'] },
          }
        : { status: 401, json: { title: 'Unauthorized', status: 401, code: 'UNAUTHENTICATED', detail: 'wrong username or password' } },
    'POST /user/tokens': (r) =>
      r.headers.cookie?.includes('access_token=AT')
        ? {
            status: 201,
            json: {
              id: 'tok-1',
              name: (JSON.parse(r.body) as { name: string }).name,
              scope: 'write',
              createdAt: '',
              expiresAt: '2027-01-01T00:00:00.000Z',
              lastUsedAt: null,
              token: 'qry_abc',
            },
          }
        : { status: 401, json: { title: 'Unauthorized', status: 401, code: 'UNAUTHENTICATED', detail: 'no session' } },
    'POST /user/logout': () => ({ json: { status: 'logged-out' } }),
    'GET /nodes/details': () => ({ json: NODES }),
    'DELETE /user/tokens/tok-1': () => ({ status: 204 }),
  });
  t.teardown(() => f.close());
  const home = await configHome(t);
  const login = await quarry(['--server', f.url, 'login', '-u', 'admin', '--password-stdin'], { home, input: 'pw-secret-1\n' });
  t.is(login.code, 0, login.stderr);
  t.false(login.stdout.includes('pw-secret-1') || login.stderr.includes('pw-secret-1'), 'the password is never printed');
  t.false(login.stdout.includes('qry_abc'), 'nor the token');
  const path = join(home, 'quarry', 'config.json');
  t.is((await stat(path)).mode & 0o777, 0o600);
  t.is((await stat(join(home, 'quarry'))).mode & 0o777, 0o700);
  t.like(JSON.parse(await readFile(path, 'utf8')), { server: f.url, token: 'qry_abc', tokenId: 'tok-1' });
  t.true((JSON.parse(f.seen.find((s) => s.path === '/user/tokens')!.body) as { name: string }).name.startsWith('quarry-cli-'));
  t.true(
    f.seen.some((s) => s.path === '/user/logout'),
    'the password session is closed',
  );
  const get = await quarry(['get', 'nodes'], { home });
  t.is(get.code, 0, get.stderr);
  t.regex(get.stdout, /^HOSTNAME\s+NAME\s+STATUS/);
  t.regex(get.stdout, /node-1\s+storage-1\s+active\s+10\.0\.0\.1\s+mon\s+5\s+3\s+yes/);
  t.is(f.seen.find((s) => s.path === '/nodes/details')!.headers.authorization, 'Bearer qry_abc');
  const out = await quarry(['logout'], { home });
  t.is(out.code, 0, out.stderr);
  t.is(f.seen.at(-1)!.method, 'DELETE');
  t.is(f.seen.at(-1)!.headers.authorization, 'Bearer qry_abc');
  await t.throwsAsync(stat(path));
  const wrong = await quarry(['--server', f.url, 'login', '-u', 'admin', '--password-stdin'], { home, input: 'nope\n' });
  t.is(wrong.code, 1);
  t.regex(wrong.stderr, /UNAUTHENTICATED.*wrong username or password/);
});

test('cli QUARRY_SERVER and QUARRY_TOKEN win over the config file, and --server over both', async (t) => {
  const a = await fakeServer({ 'GET /nodes/details': () => ({ json: NODES }) });
  const b = await fakeServer({ 'GET /nodes/details': () => ({ json: NODES }) });
  t.teardown(() => a.close());
  t.teardown(() => b.close());
  const home = await configHome(t);
  await mkdir(join(home, 'quarry'), { recursive: true });
  await writeFile(join(home, 'quarry', 'config.json'), JSON.stringify({ server: 'http://127.0.0.1:9', token: 'file-token' }));
  const env = { XDG_CONFIG_HOME: home, QUARRY_SERVER: a.url, QUARRY_TOKEN: 'env-token' };
  t.is((await runCli(['get', 'nodes'], env)).code, 0);
  t.is(a.seen[0]!.headers.authorization, 'Bearer env-token');
  const json = await runCli(['--server', b.url, 'get', 'nodes', '-o', 'json'], env);
  t.is(json.code, 0);
  t.deepEqual(JSON.parse(json.stdout), NODES);
  t.is(b.seen.length, 1);
  t.is(a.seen.length, 1);
});

test('cli a refused request exits 1 with the problem title, detail, errors and request id', async (t) => {
  const f = await fakeServer({
    'PUT /specs/files/bad.yaml': () => ({
      status: 400,
      json: {
        title: 'Bad Request',
        status: 400,
        code: 'SPEC_INVALID',
        detail: 'bad.yaml: 1 error(s); nothing was written',
        errors: [{ path: '/body/spec/gateway', message: 'line 6, column 12: must match format "ipv4"', line: 6, column: 12 }],
        requestId: 'req-42',
      },
    }),
  });
  t.teardown(() => f.close());
  const home = await configHome(t);
  const file = join(home, 'bad.yaml');
  await writeFile(file, 'kind: Network\n');
  const r = await runCli(['apply', '-f', file], { XDG_CONFIG_HOME: home, QUARRY_SERVER: f.url, QUARRY_TOKEN: 't' });
  t.is(r.code, 1);
  t.deepEqual(r.stderr.split('\n'), [
    'error: Bad Request (SPEC_INVALID): bad.yaml: 1 error(s); nothing was written',
    '  /body/spec/gateway: line 6, column 12: must match format "ipv4"',
    'request id: req-42',
  ]);
  t.is(f.seen[0]!.headers['content-type'], 'application/yaml');
  t.is(f.seen[0]!.body, 'kind: Network\n');
});

test('cli a refused token, an unreachable server and no login exit 4', async (t) => {
  const f = await fakeServer({
    'GET /status': () => ({
      status: 401,
      json: { title: 'Unauthorized', status: 401, code: 'UNAUTHENTICATED', detail: 'the token was revoked' },
    }),
  });
  t.teardown(() => f.close());
  const home = await configHome(t);
  const refused = await runCli(['wait', '--for', 'converged'], { XDG_CONFIG_HOME: home, QUARRY_SERVER: f.url, QUARRY_TOKEN: 't' });
  t.is(refused.code, 4);
  t.regex(refused.stderr, /the token was revoked[\s\S]*run `quarry login` again/);
  const down = await quarry(['get', 'disks'], {
    home,
    env: { QUARRY_SERVER: `http://127.0.0.1:${await closedPort()}`, QUARRY_TOKEN: 't' },
  });
  t.is(down.code, 4);
  t.regex(down.stderr, /cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
  const nobody = await quarry(['get', 'disks'], { home });
  t.is(nobody.code, 4);
  t.regex(nobody.stderr, /not logged in: run `quarry login/);
});

test('cli wait exits 3 when not converged before the timeout, naming what blocks', async (t) => {
  const f = await fakeServer({
    'GET /status': () => ({
      json: {
        health: { status: 'HEALTH_OK', checks: [] },
        converged: false,
        convergence: [{ kind: 'Node', ready: 2, total: 3 }],
        blocked: [
          { kind: 'Node', id: '', name: 'node-9', reason: 'NodeNotDiscovered', message: 'no machine has booted with 52:54:00:00:00:09' },
        ],
        blockedCount: 1,
      },
    }),
  });
  t.teardown(() => f.close());
  const r = await runCli(['wait', '--for', 'converged', '--timeout', '300ms', '--interval', '100ms'], {
    QUARRY_SERVER: f.url,
    QUARRY_TOKEN: 't',
    XDG_CONFIG_HOME: '/nonexistent',
  });
  t.is(r.code, 3);
  t.regex(r.stdout, /not converged: Node 2\/3; 1 blocked\n {2}Node node-9: NodeNotDiscovered: no machine has booted/);
  t.regex(r.stderr, /not converged after 300ms; still blocked:\n {2}Node node-9: NodeNotDiscovered/);
});

test('cli an unknown command, option or choice, or a missing argument, exits 2 with usage', async (t) => {
  const home = await configHome(t);
  for (const args of [['bogus'], ['get'], ['get', 'pods'], ['describe', 'node'], ['get', 'nodes', '--bogus'], ['wait'], []]) {
    const r = await quarry(args, { home });
    t.is(r.code, 2, args.join(' '));
    t.regex(r.stderr, /Usage: quarry/, args.join(' '));
  }
  const help = await quarry(['describe', '--help'], { home });
  t.is(help.code, 0);
  t.regex(help.stdout, /Usage: quarry describe \[options\] <kind> <name>/);
  const top = await quarry(['--help'], { home });
  t.regex(top.stdout, /Exit codes:\n {2}0 {2}ok\n {2}1 {2}the server refused/);
});

test('cli completion scripts are generated from the command tree and parse in their shell', async (t) => {
  const program = buildProgram({ out: () => {}, err: () => {}, env: {}, stdin: process.stdin });
  const bash = bashCompletion(program);
  for (const c of program.commands) t.true(bash.includes(`    ${c.name()}) COMPREPLY=`), c.name());
  t.true(bash.includes("'nodes disks runs networks images files questions -o --output --limit --help'"));
  t.true(bash.includes('disk.wipe'), 'operations come from the invoke argument choices');
  const home = await configHome(t);
  await writeFile(join(home, 'c.bash'), bash);
  await t.notThrowsAsync(promisify(execFile)('bash', ['-n', join(home, 'c.bash')]));
  const zsh = zshCompletion(program);
  t.true(zsh.startsWith('#compdef quarry'));
  for (const c of program.commands) t.true(zsh.includes(`    ${c.name()}) compadd --`), c.name());
});

test('cli invoke sends the resolved ids, --disk and --param, and exits 1 when a target is rejected', async (t) => {
  const disk = {
    id: '11111111-0000-4000-8000-000000000001',
    nodeId: NODES[0]!.id,
    nodeHostname: 'node-1',
    devicePath: '/dev/sdb',
    serial: 'SER-A',
  };
  let verdict = 'scheduled';
  const f = await fakeServer({
    'GET /nodes/details': () => ({ json: NODES }),
    'GET /disks': () => ({ json: [disk] }),
    'POST /invoke/node': (r) => ({
      json: {
        results: [
          {
            id: (JSON.parse(r.body) as { nodeIds: string[] }).nodeIds[0],
            status: verdict,
            ...(verdict === 'rejected' ? { reason: 'not offered' } : {}),
          },
        ],
      },
    }),
  });
  t.teardown(() => f.close());
  const env = { QUARRY_SERVER: f.url, QUARRY_TOKEN: 't', XDG_CONFIG_HOME: '/nonexistent' };
  const r = await runCli(
    ['invoke', 'ceph.create-nfs', 'storage-1', '--disk', 'node-1:/dev/sdb', '--param', 'export=cephfs', '--param', 'path=/'],
    env,
  );
  t.is(r.code, 0, r.stderr);
  t.is(r.stdout, 'storage-1: scheduled');
  t.deepEqual(JSON.parse(f.seen.at(-1)!.body), {
    operation: 'ceph.create-nfs',
    nodeIds: [NODES[0]!.id],
    diskId: disk.id,
    params: { export: 'cephfs', path: '/' },
  });
  verdict = 'rejected';
  const no = await runCli(['invoke', 'node.restart', 'node-1'], env);
  t.is(no.code, 1);
  t.is(no.stdout, 'node-1: rejected: not offered');
  t.regex(no.stderr, /node\.restart: 1 of 1 target\(s\) rejected/);
  t.is((await runCli(['invoke', 'node.restart', 'node-1', '--param', 'nokey'], env)).code, 2);
});
