// What a network-booted test VM runs: Debian's cloud kernel and a busybox initrd whose /init
// plays the installer. Both come from Debian's own packages (unpacked, never installed), are
// cached between runs, and are downloaded with apt-get the first time (about 28 MB, 1–2 s).
import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Debian's cloud kernel has virtio-net as modules; this is their load order (no modules.dep). */
export const VIRTIO_MODULES = [
  'virtio_ring',
  'virtio',
  'virtio_pci_legacy_dev',
  'virtio_pci_modern_dev',
  'virtio_pci',
  'failover',
  'net_failover',
  'virtio_net',
];

export interface KernelKit {
  vmlinuz: string;
  busybox: string;
  modules: string[];
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

/** Fetches (once) and unpacks the kernel package and busybox-static into `cache`. */
export async function kernelKit(cache = process.env.QUARRY_NETBOOT_CACHE ?? '/var/cache/quarry-netboot'): Promise<KernelKit> {
  const kit = { vmlinuz: join(cache, 'vmlinuz'), busybox: join(cache, 'busybox'), modDir: join(cache, 'modules') };
  if (!((await exists(kit.vmlinuz)) && (await exists(kit.busybox)))) {
    const debs = join(cache, 'deb');
    const unpacked = join(cache, 'x');
    await mkdir(debs, { recursive: true });
    await chmod(debs, 0o777); // apt's _apt user writes the download there
    const { stdout } = await run('apt-cache', ['depends', 'linux-image-cloud-amd64']);
    const kpkg = /Depends: (linux-image-\S+)/.exec(stdout)?.[1];
    if (!kpkg) throw new Error('apt-cache knows no linux-image-cloud-amd64 dependency: run apt-get update');
    await run('apt-get', ['download', '-qq', kpkg, 'busybox-static'], { cwd: debs });
    for (const deb of await readdir(debs)) if (deb.endsWith('.deb')) await run('dpkg-deb', ['-x', join(debs, deb), unpacked]);
    const boot = (await readdir(join(unpacked, 'boot'))).find((f) => f.startsWith('vmlinuz-'));
    if (!boot) throw new Error(`no vmlinuz in ${kpkg}`);
    await mkdir(kit.modDir, { recursive: true });
    for (const m of VIRTIO_MODULES) {
      const { stdout: found } = await run('find', [join(unpacked, 'lib/modules'), '-name', `${m}.ko*`]);
      const file = found.trim().split('\n')[0];
      if (!file) throw new Error(`module ${m} not in ${kpkg}`);
      await cp(file, join(kit.modDir, file.slice(file.lastIndexOf('/') + 1)));
    }
    await cp(join(unpacked, 'bin/busybox'), kit.busybox);
    await cp(join(unpacked, 'boot', boot), kit.vmlinuz);
    await rm(unpacked, { recursive: true, force: true });
  }
  const modules = (await readdir(kit.modDir)).map((f) => join(kit.modDir, f));
  return { vmlinuz: kit.vmlinuz, busybox: kit.busybox, modules };
}

/** A gzip'd newc initrd: busybox, the virtio modules, and `init` as its /init script. */
export async function buildInitrd(kit: KernelKit, init: string, out: string): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'qnb-initrd-'));
  try {
    for (const d of ['bin', 'proc', 'sys', 'dev', 'lib/modules', 'tmp']) await mkdir(join(root, d), { recursive: true });
    await cp(kit.busybox, join(root, 'bin/busybox'));
    for (const m of kit.modules) await cp(m, join(root, 'lib/modules', m.slice(m.lastIndexOf('/') + 1)));
    await writeFile(join(root, 'init'), init, { mode: 0o755 });
    await run('sh', ['-c', `cd "${root}" && find . | "${kit.busybox}" cpio -o -H newc 2>/dev/null | gzip -1 > "${out}"`]);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
