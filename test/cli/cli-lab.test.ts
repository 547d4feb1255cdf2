// The built `quarry` binary, run as a child process against a lab Quarry over real HTTP, as an
// operator would: log in, apply the example spec, wait for convergence, read it back by name,
// answer a wipe question, invoke by hostname, and get the server's problem detail when refused.
import test from 'ava';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ADMIN_PASSWORD, allActive, startLab, waitFor, type LabQuarry } from '../lab/harness.js';
import { configHome, quarry, startQuarry, type Ran } from './helpers.js';

const EXAMPLE = join(process.cwd(), 'examples', 'specs', 'lab-cluster.yaml');

interface DiskJson {
  id: string;
  nodeHostname: string;
  devicePath: string;
  serial: string;
  hasFilesystem: boolean;
  osdId: number | null;
  isMon: boolean;
  reasons: string[];
}

/** Logs in through the binary (password on stdin) and returns a runner bound to that config. */
async function loggedIn(t: Parameters<typeof configHome>[0], q: LabQuarry) {
  const home = await configHome(t);
  const login = await quarry(['login', '--server', q.url, '--username', 'admin', '--password-stdin'], {
    home,
    input: `${ADMIN_PASSWORD}\n`,
  });
  t.is(login.code, 0, login.stderr);
  t.false(`${login.stdout}${login.stderr}`.includes(ADMIN_PASSWORD), 'the password is never printed');
  const cli = (args: string[], timeoutMs?: number): Promise<Ran> => quarry(args, { home, ...(timeoutMs ? { timeoutMs } : {}) });
  return { home, cli };
}

const ok = (r: Ran): string => `exit ${String(r.code)}\n${r.stdout}\n${r.stderr}`;

test('cli lab: login, apply the example spec, wait for convergence, get and describe by name, answer a wipe question', async (t) => {
  const q = await startLab(t, 3);
  await allActive(q, 3);
  const { home, cli } = await loggedIn(t, q);
  const path = join(home, 'quarry', 'config.json');
  t.is((await stat(path)).mode & 0o777, 0o600);
  const stored = JSON.parse(await readFile(path, 'utf8')) as { server: string; token: string };
  t.is(stored.server, q.url);
  t.regex(stored.token, /^qry_/);

  const apply = await cli(['apply', '-f', EXAMPLE]);
  t.is(apply.code, 0, ok(apply));
  t.regex(apply.stdout, /^\+ Network 10\.0\.0\.0\/16$/m);
  t.regex(apply.stdout, /lab-cluster\.yaml: (applied|pending) \(8 document\(s\)/);
  t.is(await readFile(join(q.config.specsDir, 'lab-cluster.yaml'), 'utf8'), await readFile(EXAMPLE, 'utf8'), 'the folder holds the file');

  const wait = await cli(['wait', '--for', 'converged', '--timeout', '45s'], 55_000);
  t.is(wait.code, 0, ok(wait));
  t.regex(wait.stdout, /converged \(health HEALTH_OK\)$/m);

  const hostnames = (await q.nodes()).map((n) => n.spec.hostname);
  const nodes = await cli(['get', 'nodes']);
  t.is(nodes.code, 0, ok(nodes));
  for (const h of hostnames) t.regex(nodes.stdout, new RegExp(`^${h}\\s+storage-\\d\\s+active\\s`, 'm'));
  const files = await cli(['get', 'files']);
  t.regex(files.stdout, /^lab-cluster\.yaml\s+applied\s+8\s/m);

  const node = await cli(['describe', 'node', 'storage-1']);
  t.is(node.code, 0, ok(node));
  t.regex(node.stdout, /^Hostname:\s+node-525400000001$/m);
  t.regex(node.stdout, /^ {2}Ready=True/m);
  t.regex(node.stdout, /^Recent runs:/m);

  // A disk that holds a filesystem and no OSD: wiping it asks first.
  const disks = JSON.parse((await cli(['get', 'disks', '-o', 'json'])).stdout) as DiskJson[];
  const victim = disks.find((d) => d.hasFilesystem && d.osdId === null && !d.isMon && !d.reasons.includes('system-disk'));
  if (!victim) return t.fail(`no disk to wipe among ${JSON.stringify(disks.map((d) => [d.devicePath, d.reasons]))}`);
  const described = await cli(['describe', 'disk', victim.serial]);
  t.regex(described.stdout, new RegExp(`^Disk:\\s+${victim.nodeHostname}:${victim.devicePath}$`, 'm'));
  const wipe = await cli(['invoke', 'disk.wipe', `${victim.nodeHostname}:${victim.devicePath}`]);
  t.is(wipe.code, 0, ok(wipe));
  t.is(wipe.stdout.trim(), `${victim.nodeHostname}:${victim.devicePath}: scheduled`);
  const question = await waitFor('the wipe question', async () => {
    const r = await cli(['get', 'questions', '-o', 'json']);
    return (JSON.parse(r.stdout) as Array<{ id: string; prompt: string }>).find((x) => x.prompt.includes(victim.devicePath));
  });
  const listed = await cli(['get', 'questions']);
  t.regex(listed.stdout, new RegExp(`^${question.id.slice(0, 8)}\\s+disk\\.wipe`, 'm'));
  const answer = await cli(['answer', question.id.slice(0, 8), 'yes']);
  t.is(answer.code, 0, ok(answer));
  t.regex(answer.stdout, /^answered yes: /);
  await waitFor('the disk wiped', async () => {
    const d = (JSON.parse((await cli(['get', 'disks', '-o', 'json'])).stdout) as DiskJson[]).find((x) => x.id === victim.id);
    return d && !d.hasFilesystem;
  });
});

test('cli lab: invoke by hostname, follow the run log, refused input shows the problem, a stopped server exits 4', async (t) => {
  const q = await startLab(t, 1);
  const [n] = await allActive(q, 1);
  const hostname = n!.spec.hostname;
  const { home, cli } = await loggedIn(t, q);

  const watching = startQuarry(['events', '-w', '--type', 'task.state'], { home });
  t.teardown(() => watching.child.kill('SIGKILL'));
  const restart = await cli(['invoke', 'node.restart', hostname]);
  t.is(restart.code, 0, ok(restart));
  t.is(restart.stdout.trim(), `${hostname}: scheduled`);
  const run = await waitFor('the restart run', async () => {
    const runs = JSON.parse((await cli(['get', 'runs', '-o', 'json'])).stdout) as Array<{
      id: string;
      taskName: string;
      nodeHostname: string;
    }>;
    return runs.find((r) => r.taskName === 'node.restart' && r.nodeHostname === hostname);
  });
  const described = await cli(['describe', 'run', run.id.slice(0, 8)]);
  t.regex(described.stdout, new RegExp(`^Target:\\s+${hostname} \\(${n!.id}\\)$`, 'm'));
  const logs = await cli(['logs', run.id.slice(0, 8), '-f']);
  t.is(logs.code, 0, ok(logs));
  t.regex(logs.stdout, /systemctl reboot/);
  t.regex(logs.stdout, /^run [0-9a-f]{8} completed$/m);
  await waitFor('the live stream shows the run', () => watching.got.stdout.includes(`Node ${hostname}  node.restart completed`));
  watching.child.kill('SIGINT');
  t.is(await watching.exited, 0, watching.got.stderr);
  const runs = await cli(['get', 'runs']);
  t.regex(runs.stdout, new RegExp(`^${run.id.slice(0, 8)}\\s+node\\.restart\\s+completed\\s+${hostname}\\s+${hostname}\\s`, 'm'));
  const events = await cli(['events', '--type', 'task.state']);
  t.regex(events.stdout, new RegExp(`^\\d\\d:\\d\\d:\\d\\d  task\\.state\\.changed\\s+Node ${hostname}  node\\.restart completed$`, 'm'));

  const unknown = await cli(['invoke', 'node.restart', 'no-such-node']);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, new RegExp(`no node named no-such-node; known: ${hostname}`));

  const bad = join(home, 'bad.yaml');
  await writeFile(bad, 'apiVersion: quarry/v1\nkind: Network\nmetadata: { name: x }\nspec:\n  cidr: 10.9.0.0/16\n  gateway: not-an-ip\n');
  const refused = await cli(['apply', '-f', bad]);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /^error: Bad Request \(SPEC_INVALID\): bad\.yaml: \d+ error\(s\); nothing was written$/m);
  t.regex(refused.stderr, /line 6, column \d+: must match format "ipv4"/);
  t.regex(refused.stderr, /^request id: \S+$/m);
  t.false((await cli(['get', 'files'])).stdout.includes('bad.yaml'));
  const plan = await cli(['plan', '-f', bad]);
  t.is(plan.code, 1);
  t.regex(plan.stdout, /^bad\.yaml:6:\d+: must match format "ipv4"/m);

  // logout revokes the token: it no longer opens anything, and the config file is gone.
  const token = (JSON.parse(await readFile(join(home, 'quarry', 'config.json'), 'utf8')) as { token: string }).token;
  const logout = await cli(['logout']);
  t.is(logout.code, 0, ok(logout));
  await t.throwsAsync(stat(join(home, 'quarry', 'config.json')));
  const revoked = await quarry(['get', 'nodes'], { home, env: { QUARRY_SERVER: q.url, QUARRY_TOKEN: token } });
  t.is(revoked.code, 4, ok(revoked));
  t.regex(revoked.stderr, /run `quarry login` again/);

  // Logged in again: a live stream ends with the server, and the server down is exit 4.
  const again = await quarry(['login', '--server', q.url, '-u', 'admin', '--password-stdin'], { home, input: ADMIN_PASSWORD });
  t.is(again.code, 0, ok(again));
  const following = startQuarry(['events', '-w'], { home });
  t.teardown(() => following.child.kill('SIGKILL'));
  await waitFor('the held events printed', () => following.got.stdout.includes('task.state.changed'));
  await q.stop();
  t.is(await following.exited, 4, 'a stream the server ends exits 4');
  t.regex(following.got.stderr, /the event stream ended|cannot reach/);
  const down = await cli(['get', 'nodes']);
  t.is(down.code, 4, ok(down));
  t.regex(down.stderr, /cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
});
