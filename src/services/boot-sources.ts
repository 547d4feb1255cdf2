// What a machine boots and on which network, as templates and boot scripts see it: the image
// area's default (or chosen) downloaded image, and the network whose CIDR holds the node's
// address. The composition root adds the signed links to image files (main/provisioning.ts).
import type { Config } from '../config.js';
import { contains, parseCidr } from '../model/ipv4.js';
import { ImageKind, type ImageSpec, type ImageStatus } from '../model/image-kinds.js';
import { NetworkKind, type NetworkSpec } from '../model/network-kinds.js';
import type { Store } from '../store/types.js';
import { isDownloaded, type Images } from './images.js';
import type { BootImage, NodeDoc, ProvisioningSources } from './template-context.js';

/** Until an image is downloaded, the lab's machines boot a stand-in (they fetch no files), so
 * the lab works before its first download; a real master tells machines to wait instead. */
const LAB_STAND_IN: BootImage = {
  id: 'lab',
  name: 'Quarry lab stand-in image',
  kernel: 'vmlinuz',
  initrd: 'initrd.img',
  cmdline: 'console=ttyS0',
};

const KERNEL = /^(vmlinuz|kernel|linux|bzimage)/i;
const INITRD = /^initr/i;

export function bootSources(deps: {
  driver: Config['driver'];
  store: Store;
  images: Pick<Images, 'defaultImage'>;
}): Pick<ProvisioningSources, 'bootImageFor' | 'networkFor'> {
  const { store, images } = deps;

  async function bootImageFor(node: NodeDoc): Promise<BootImage | null> {
    const chosen = node.spec.image
      ? await store.get<ImageSpec, ImageStatus>(ImageKind.Image, node.spec.image)
      : await images.defaultImage();
    if (!chosen || !isDownloaded(chosen)) return deps.driver === 'lab' && !node.spec.image ? LAB_STAND_IN : null;
    const kernel = chosen.spec.files.find((f) => KERNEL.test(f.name));
    const initrd = chosen.spec.files.find((f) => INITRD.test(f.name));
    if (!kernel || !initrd) return null;
    return { id: chosen.id, name: chosen.spec.name, kernel: kernel.name, initrd: initrd.name, cmdline: 'console=tty0 console=ttyS0' };
  }

  async function networkFor(node: NodeDoc): Promise<Record<string, unknown> | null> {
    const ip = node.status.ip;
    if (!ip) return null;
    for (const n of await store.list<NetworkSpec>(NetworkKind.Network)) {
      const cidr = parseCidr(n.spec.cidr);
      if ('error' in cidr || !contains(cidr, ip)) continue;
      const { cidr: c, gateway, dnsServers, rangeStart, rangeEnd } = n.spec;
      return { id: n.id, cidr: c, gateway, dnsServers: [...dnsServers], rangeStart, rangeEnd };
    }
    return null;
  }

  return { bootImageFor, networkFor };
}
