// Recorded outputs of a real Ceph 16.2.15 cluster (test/fixtures/ceph, written by record.sh)
// and the FakeRunner plumbing to replay them.
import { readFileSync } from 'node:fs';
import { CephClient } from '../../src/clients/ceph.js';
import type { FakeReply, FakeRunner } from '../helpers/fake-runner.js';

// From dist/test/clients/ back to the sources' fixtures (tsc does not copy JSON).
const DIR = new URL('../../../test/fixtures/ceph/', import.meta.url);

/** The stdout of a successful `--format json` call, byte for byte. */
export const fixture = (name: string): string => readFileSync(new URL(`${name}.json`, DIR), 'utf8');

export interface Recorded {
  command: string;
  exitCode: number;
  stdout: string;
  stderr: string;
  fileBytes?: number;
}

/** A call whose exit code and stderr were kept too. */
export const recorded = (name: string): Recorded => JSON.parse(readFileSync(new URL(`${name}.result.json`, DIR), 'utf8')) as Recorded;

export const replyOf = (r: Recorded): FakeReply => ({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode });

/** Facts of the recorded cluster that tests assert. Re-recording changes the ids and byte
 * counts: update them here. The layout (2 OSDs on host "vm", 9 pools, 65 PGs) is the
 * mini-cluster script's (docs/real-components.md) and stays. */
export const RECORDED = {
  fsid: '4472770b-acbf-445c-ab2b-e96f396aa78f',
  host: 'vm',
  version: 'ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)',
  totalBytes: 4294967296,
  usedBytes: 609439744,
  availableBytes: 3685527552,
  /** max_avail of every pool in `ceph df`, and percent_used of cephfs_metadata. */
  poolMaxAvail: 3470725888,
  metadataPercentUsed: 9.441163456358481e-6,
  osdMapEpoch: 40,
  mdsGid: 4154,
  osd0Uuid: '46d19248-0243-482c-a750-e9efd959e191',
  monPort: 27400,
  rgwAccessKey: 'D7L4GGU907U2AO57PKNF',
  /** record.sh puts these in place of the real secrets. */
  fakeKey: 'AQAAAAAAAAAAABAAcXVhcnJ5LWZha2Uta2V5IQ==',
  fakeSecret: 'FAKEsecretKEYquarryFIXTURE0000000000000000',
} as const;

export const CONF = '/etc/quarry/ceph/ceph.conf';
export const KEYRING = '/etc/quarry/ceph/ceph.client.admin.keyring';

/** The arguments CephClient sends for `verb` with the options of `adminClient`. */
export const cephArgs = (...verb: string[]): string[] => [
  '-c',
  CONF,
  '--connect-timeout',
  '20',
  '-n',
  'client.admin',
  '-k',
  KEYRING,
  '--format',
  'json',
  ...verb,
];

export const adminClient = (runner: FakeRunner): CephClient =>
  new CephClient({ runner, conf: CONF, name: 'client.admin', keyring: KEYRING });

/** Scripts `ceph <verb>` to answer with the named JSON fixture. */
export const expectJson = (runner: FakeRunner, verb: string[], name: string): FakeRunner =>
  runner.expect('ceph', cephArgs(...verb), { stdout: fixture(name) });

/** Scripts `ceph <verb>` to answer as the recorded call did (exit code, stdout, stderr). */
export const expectRecorded = (runner: FakeRunner, verb: string[], name: string): FakeRunner =>
  runner.expect('ceph', cephArgs(...verb), replyOf(recorded(name)));
