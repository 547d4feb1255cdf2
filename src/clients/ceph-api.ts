// What the loops ask of a Ceph cluster, as an interface: the real CephClient/RgwAdmin answer it
// by running the CLI; the lab's simulated cluster answers it from its own state. Loops depend
// on this, never on which of the two is behind it.
import type { CephClient } from './ceph.js';
import type { RgwAdmin } from './rgw-admin.js';

export type CephApi = Pick<
  CephClient,
  | 'status'
  | 'health'
  | 'df'
  | 'osdTree'
  | 'osdDump'
  | 'monDump'
  | 'quorumStatus'
  | 'mgrStat'
  | 'mdsStat'
  | 'fsList'
  | 'poolList'
  | 'okToStop'
  | 'safeToDestroy'
  | 'poolCreate'
  | 'fsNew'
  | 'osdNew'
  | 'osdOut'
  | 'osdIn'
  | 'osdDestroy'
  | 'osdPurge'
  | 'osdDf'
  | 'osdDfOf'
  | 'authGetOrCreate'
  | 'authGet'
  | 'authImport'
  | 'monGetmap'
  | 'monRemove'
  | 'osdOkToStop'
  | 'monOkToStop'
  | 'mdsOkToStop'
  | 'osdSetGroup'
  | 'osdUnsetGroup'
  | 'osdNoout'
  | 'crushAddBucket'
  | 'crushMove'
  | 'crushRuleCreateReplicated'
  | 'crushRuleDump'
  | 'poolSetCrushRule'
  | 'poolRules'
  | 'fsFail'
  | 'fsRm'
  | 'poolRm'
  | 'configGet'
  | 'configSet'
  | 'configRm'
>;

export type RgwApi = Pick<RgwAdmin, 'userCreate' | 'userInfo' | 'bucketStats' | 'userRm'>;
