// The ceph.conf this node's daemons read: the master's, byte for byte, then this node's own
// section. Ceph merges repeated sections and a later value wins, so the master's file needs no
// editing and its hash stays comparable (the master's part is the file's first bytes).
export interface CephPaths {
  /** Daemon data, keyrings and the local ceph.conf (default /var/lib/ceph). */
  dataDir: string;
  /** Pid files and admin sockets (default /run/ceph). */
  runDir: string;
  logDir: string;
  /** The address daemons bind and advertise; unset: Ceph picks from public_network. */
  publicAddr: string | null;
  /** The window of messenger ports for mgr, osd and mds; unset: Ceph's 6800-7300. */
  portRange: { min: number; max: number } | null;
  /** Extra settings (lines of ini) appended last, e.g. test tunables. */
  extraConf: string;
}

export function localConf(masterConf: string, p: CephPaths): string {
  const d = p.dataDir;
  const lines = [
    '',
    "# This node: written by the Quarry agent after the master's conf above.",
    '[global]',
    `run_dir = ${p.runDir}`,
    `pid_file = ${p.runDir}/$cluster-$name.pid`,
    `admin_socket = ${p.runDir}/$cluster-$name.asok`,
    `log_file = ${p.logDir}/$cluster-$name.log`,
    `crash_dir = ${d}/crash`,
    `mon_data = ${d}/mon/$cluster-$id`,
    `mgr_data = ${d}/mgr/$cluster-$id`,
    `osd_data = ${d}/osd/$cluster-$id`,
    `mds_data = ${d}/mds/$cluster-$id`,
    `rgw_data = ${d}/radosgw/$cluster-$id`,
    ...(p.publicAddr ? [`public_addr = ${p.publicAddr}`, `cluster_addr = ${p.publicAddr}`] : []),
    ...(p.portRange ? [`ms_bind_port_min = ${p.portRange.min}`, `ms_bind_port_max = ${p.portRange.max}`] : []),
    '[mon]',
    `mon_cluster_log_file = default=${p.logDir}/$cluster.$channel.log cluster=${p.logDir}/$cluster.log`,
    '[client]',
    `keyring = ${d}/keyring/$cluster.$name.keyring`,
  ];
  // Settings without a section of their own are global ones.
  const extra = /^\[/.test(p.extraConf.trim()) ? p.extraConf.trim() : p.extraConf.trim() && `[global]\n${p.extraConf.trim()}`;
  return `${masterConf.replace(/\n*$/, '\n')}${lines.join('\n')}\n${extra ? `${extra}\n` : ''}`;
}
