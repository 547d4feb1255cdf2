// Two network namespaces joined by a veth pair, made for one test and removed after it even
// when it fails: A is the master's side (Quarry's dnsmasq), B a machine's (busybox udhcpc).
// Nothing here touches an interface or namespace the test did not create.
import type { ExecutionContext } from 'ava';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface NetnsPair {
  nsA: string;
  nsB: string;
  vethA: string;
  vethB: string;
  /** 10.250.<n>.0/24, which exists only inside the two namespaces. */
  subnet: string;
  /** The master's address, .1 of the subnet, on vethA. */
  masterIp: string;
  dir: string;
  /** A DHCP lease in B: udhcpc's view of the options, or null when no server answered. */
  lease(mac: string, extra?: string[]): Promise<Record<string, string> | null>;
}

const ip = (...args: string[]): void => {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
};

/** Stops what runs inside a namespace (only what this test started there), then removes it. */
function removeNamespace(ns: string): void {
  let pids: string[] = [];
  try {
    pids = execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return; // already gone
  }
  for (const pid of pids) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone
    }
  }
  try {
    ip('netns', 'del', ns);
  } catch {
    // gone
  }
}

const UDHCPC_SCRIPT = `#!/bin/sh
case "$1" in bound|renew)
  echo "ip=$ip|mask=$mask|router=$router|dns=$dns|serverid=$serverid|siaddr=$siaddr|boot_file=$boot_file";;
esac
exit 0
`;

export async function netnsPair(t: ExecutionContext): Promise<NetnsPair> {
  if (process.getuid?.() !== 0) throw new Error('the real DHCP test needs root (ip netns, dnsmasq); CI runs as root');
  const tag = randomBytes(3).toString('hex');
  const third = 10 + (randomBytes(1)[0]! % 240);
  const pair = {
    nsA: `qnet-a-${tag}`,
    nsB: `qnet-b-${tag}`,
    vethA: `qnet-${tag}a`,
    vethB: `qnet-${tag}b`,
    subnet: `10.250.${third}.0/24`,
    masterIp: `10.250.${third}.1`,
  };
  const dir = await mkdtemp(join(tmpdir(), 'qnet-'));
  t.teardown(async () => {
    removeNamespace(pair.nsB);
    removeNamespace(pair.nsA);
    await rm(dir, { recursive: true, force: true });
  });
  ip('netns', 'add', pair.nsA);
  ip('netns', 'add', pair.nsB);
  ip('link', 'add', pair.vethA, 'type', 'veth', 'peer', 'name', pair.vethB);
  ip('link', 'set', pair.vethA, 'netns', pair.nsA);
  ip('link', 'set', pair.vethB, 'netns', pair.nsB);
  ip('-n', pair.nsA, 'addr', 'add', `${pair.masterIp}/24`, 'dev', pair.vethA);
  for (const [ns, dev] of [
    [pair.nsA, pair.vethA],
    [pair.nsB, pair.vethB],
  ] as const) {
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    ip('-n', ns, 'link', 'set', dev, 'up');
  }
  const script = join(dir, 'udhcpc.sh');
  await writeFile(script, UDHCPC_SCRIPT);
  await chmod(script, 0o755);
  const lease = async (mac: string, extra: string[] = []): Promise<Record<string, string> | null> => {
    ip('-n', pair.nsB, 'link', 'set', pair.vethB, 'address', mac);
    const out = await run(
      'ip',
      ['netns', 'exec', pair.nsB, 'busybox', 'udhcpc', '-i', pair.vethB, '-f', '-q', '-n', '-t', '5', '-T', '1', '-s', script, ...extra],
      { timeout: 20_000 },
    ).catch((err: unknown) => ({ stdout: (err as { stdout?: string }).stdout ?? '' }));
    const line = out.stdout.split('\n').find((l) => l.startsWith('ip='));
    if (!line) return null;
    return Object.fromEntries(line.split('|').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  };
  return { ...pair, dir, lease };
}
