// A lab whose specs folder the test writes into, and ways to wait on what the folder says.
import type { ExecutionContext } from 'ava';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { FileStatus } from '../../src/gitops/folder.js';
import type { AnyDoc } from '../../src/model/document.js';
import type { DiskSpec, NodeSpec, NodeStatusFields } from '../../src/model/kinds.js';
import { masterNicId } from '../../src/model/network-kinds.js';
import { SIM_MASTER_NICS } from '../../src/sim/master.js';
import { Client } from '../http/client.js';
import { ADMIN_PASSWORD, startLab, waitFor, type LabQuarry } from '../lab/harness.js';

export const ENO1 = masterNicId(SIM_MASTER_NICS[0]!.mac);
export const ENO2 = masterNicId(SIM_MASTER_NICS[1]!.mac);

export interface SpecsLab extends LabQuarry {
  dir: string;
  put(file: string, text: string): Promise<void>;
  move(from: string, to: string): Promise<void>;
  remove(file: string): Promise<void>;
  /** Waits until the file's status passes `check`. */
  until(file: string, check: (s: FileStatus) => boolean, what?: string): Promise<FileStatus>;
  admin(): Promise<Client>;
}

export async function specsLab(t: ExecutionContext, nodes: number, over: Parameters<typeof startLab>[2] = {}): Promise<SpecsLab> {
  const q = await startLab(t, nodes, over);
  const dir = q.config.specsDir;
  await q.specs.ready;
  const path = (f: string) => join(dir, f);
  return Object.assign(q, {
    dir,
    put: async (file: string, text: string) => {
      await mkdir(dirname(path(file)), { recursive: true });
      await writeFile(path(file), text);
    },
    move: async (from: string, to: string) => {
      await mkdir(dirname(path(to)), { recursive: true });
      await rename(path(from), path(to));
    },
    remove: (file: string) => rm(path(file)),
    until: (file: string, check: (s: FileStatus) => boolean, what = 'a state') =>
      waitFor(`${file}: ${what}`, () => q.specs.folder.status().find((s) => s.file === file && check(s))),
    admin: async () => {
      const c = new Client(q.url);
      const r = await c.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD });
      if (r.status !== 200) throw new Error(`login ${r.status}`);
      return c;
    },
  });
}

export const network = (name: string, cidr: string, gateway: string, extra = ''): string =>
  `apiVersion: quarry/v1\nkind: Network\nmetadata: { name: ${name} }\nspec:\n  cidr: ${cidr}\n  gateway: ${gateway}\n  nicId: ${ENO1}\n${extra}`;

type Status = Record<string, unknown> & { phase?: string };

/** Ready as each kind's loop says it, by the phase it ends in (a disk with an OSD wanted has it
 * running; a node is active with every daemon it wants running). The lab tests' own check,
 * beside the readiness rule GET /status and /specs/status answer with. */
export function phaseReady(d: AnyDoc): boolean {
  const st = d.status as Status;
  switch (d.kind) {
    case 'Cluster':
      return ((st.quorum as string[] | undefined)?.length ?? 0) >= 3;
    case 'Network':
      return st.phase === 'running';
    case 'Image':
      return st.phase === 'downloaded';
    case 'Disk':
      return !(d.spec as DiskSpec).osd || (st.osd as { phase?: string } | undefined)?.phase === 'running';
    case 'Filesystem':
    case 'RgwUser':
      return st.phase === 'ready';
    case 'Node': {
      const n = d as unknown as { spec: NodeSpec; status: NodeStatusFields };
      return n.status.phase === 'active' && Object.keys(n.spec.daemons).every((k) => n.status.ceph?.[k as 'mon']?.phase === 'running');
    }
    default:
      return false;
  }
}
