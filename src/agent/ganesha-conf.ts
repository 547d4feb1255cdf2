// The ganesha.conf of a node's NFS gateway: one export of a CephFS path over NFSv4, through
// nfs-ganesha's Ceph FSAL (libcephfs) with the gateway's own cephx user. Every value that goes
// into the file is checked against a strict pattern first, then written quoted, so no argument
// can end a block or add a setting. Why each setting is there: docs/real-components.md, "NFS
// gateway (nfs-ganesha, FSAL CEPH)".
import { isIP } from 'node:net';

export interface GaneshaExport {
  /** The gateway's id: its cephx user is client.nfs.<name>. */
  name: string;
  /** The CephFS filesystem exported. */
  fs: string;
  /** The directory of that filesystem exported, absolute ('/' for all of it). */
  path: string;
  /** NFS port (TCP). */
  port: number;
  /** The address it listens on; 0.0.0.0 for every address. */
  bindAddr: string;
  /** This node's ceph.conf (monitors, keyring path) for the Ceph client inside ganesha. */
  cephConf: string;
  /** Where the NFSv4 client recovery records live (RecoveryBackend fs): the gateway's data dir. */
  recoveryRoot: string;
}

/** Daemon and filesystem names: Ceph's own alphabet, no spaces, quotes or newlines. */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
/** An absolute path of plain segments; no '.', '..', empty segments or trailing slash. */
const EXPORT_PATH = /^\/(?:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}(?:\/[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})*)?$/;
/** A local file path written into the file: nothing that could leave its quotes. */
const LOCAL_PATH = /^\/[^"\\\n\r\0{};]*$/;

/** The pseudo path clients mount: the filesystem's name, e.g. nfs://10.0.0.1/cephfs. */
export const pseudoOf = (fs: string): string => `/${fs}`;

export function checkExport(e: GaneshaExport): void {
  if (!NAME.test(e.name)) throw new Error(`gateway name '${shown(e.name)}' is not a plain name (letters, digits, '_', '.', '-')`);
  if (!NAME.test(e.fs)) throw new Error(`filesystem name '${shown(e.fs)}' is not a plain name (letters, digits, '_', '.', '-')`);
  if (e.path.length > 1024 || !EXPORT_PATH.test(e.path) || e.path.split('/').some((s) => s === '.' || s === '..')) {
    throw new Error(`export path '${shown(e.path)}' must be absolute, of plain segments, without '.' or '..'`);
  }
  if (!Number.isInteger(e.port) || e.port < 1 || e.port > 65535) throw new Error(`port ${e.port} is not a TCP port`);
  if (isIP(e.bindAddr) === 0) throw new Error(`bind address '${shown(e.bindAddr)}' is not an IP address`);
  for (const [what, p] of [
    ['ceph.conf', e.cephConf],
    ['recovery root', e.recoveryRoot],
  ] as const) {
    if (!LOCAL_PATH.test(p)) throw new Error(`${what} path '${shown(p)}' cannot be written into ganesha.conf`);
  }
}

/** The whole file, after checkExport. */
export function ganeshaConf(e: GaneshaExport): string {
  checkExport(e);
  const q = (s: string): string => `"${s}"`;
  return `# nfs-ganesha of client.nfs.${e.name}: written by the Quarry agent (docs/real-components.md).
NFS_CORE_PARAM {
	# NFSv4 only: v3 needs rpcbind (ganesha exits when it cannot register v3), v4 one TCP port.
	Protocols = 4;
	NFS_Port = ${e.port};
	Bind_addr = ${e.bindAddr};
	Enable_NLM = false;
	Enable_RQUOTA = false;
	Enable_UDP = false;
}
NFS_KRB5 {
	Active_krb5 = false;
}
NFSv4 {
	# Client records in a local directory: no RADOS pool (rados_kv / rados_ng) to create.
	RecoveryBackend = fs;
	RecoveryRoot = ${q(e.recoveryRoot)};
	Minor_Versions = 0, 1, 2;
}
MDCACHE {
	# CephFS caches itself; ganesha's directory chunks would only go stale.
	Dir_Chunk = 0;
}
EXPORT {
	Export_ID = 1;
	Protocols = 4;
	Transports = TCP;
	Path = ${q(e.path)};
	Pseudo = ${q(pseudoOf(e.fs))};
	Access_Type = RW;
	Squash = No_Root_Squash;
	Attr_Expiration_Time = 0;
	FSAL {
		Name = CEPH;
		User_Id = ${q(`nfs.${e.name}`)};
		Filesystem = ${q(e.fs)};
	}
}
CEPH {
	Ceph_Conf = ${q(e.cephConf)};
}
LOG {
	Default_Log_Level = EVENT;
}
`;
}

/** A refused value as an error shows it: one line, bounded. */
function shown(v: string): string {
  return JSON.stringify(v.slice(0, 80)).slice(1, -1);
}
