// RgwAdmin (radosgw-admin), replayed from real Ceph 16.2.15 outputs. The recorded secret_key
// is record.sh's fake; the access key is the real generated one.
import test from 'ava';
import { RgwAdmin } from '../../src/clients/rgw-admin.js';
import { CommandOutputError } from '../../src/clients/ceph-output.js';
import { isSecret } from '../../src/exec/runner.js';
import { CommandError } from '../../src/errors.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { CONF, KEYRING, recorded, RECORDED, replyOf } from './ceph-fixtures.js';

const base = ['-c', CONF, '-n', 'client.admin', '-k', KEYRING, '--format', 'json'];
const admin = (runner: FakeRunner) => new RgwAdmin({ runner, conf: CONF, name: 'client.admin', keyring: KEYRING });

const fixtureUser = {
  userId: 'quarry-fixture',
  displayName: 'Quarry Fixture',
  email: 'fixture@quarry.test',
  suspended: false,
  keys: [{ user: 'quarry-fixture', accessKey: RECORDED.rgwAccessKey, secretKey: RECORDED.fakeSecret }],
};

test('rgw user create parses the new user and its generated keys', async (t) => {
  const email = 'fixture@quarry.test';
  const args = [...base, 'user', 'create', '--uid=quarry-fixture', '--display-name=Quarry Fixture', `--email=${email}`];
  const runner = new FakeRunner().expect('radosgw-admin', args, replyOf(recorded('rgw-user-create')));
  const user = await admin(runner).userCreate({ uid: 'quarry-fixture', displayName: 'Quarry Fixture', email });
  t.deepEqual(user, fixtureUser);
  runner.verify();
});

test('rgw user create passes a given secret key as a SecretArg, masked in the recorded command', async (t) => {
  const secretKey = 'quarry-very-secret-0000000000000000000000';
  const runner = new FakeRunner().always(() => true, replyOf(recorded('rgw-user-create')));
  await admin(runner).userCreate({
    uid: 'quarry-fixture',
    displayName: 'Quarry Fixture',
    accessKey: RECORDED.rgwAccessKey,
    secretKey,
  });
  const call = runner.calls[0];
  const i = call?.args.indexOf('--secret-key') ?? -1;
  t.true(i > 0);
  const arg = call?.args[i + 1];
  t.true(arg !== undefined && isSecret(arg) && arg.secret === secretKey);
  t.true(call?.args.includes(`--access-key=${RECORDED.rgwAccessKey}`));
  t.false(call?.shown.includes(secretKey));
  t.regex(call?.shown ?? '', /--secret-key \*\*\*/);
  t.false(call?.args.some((a) => typeof a === 'string' && a.includes(secretKey)));
});

test('rgw user create needs both keys or neither', async (t) => {
  await t.throwsAsync(admin(new FakeRunner()).userCreate({ uid: 'u', displayName: 'U', accessKey: 'A' }), {
    instanceOf: TypeError,
  });
});

test('rgw user create of an existing user is an EEXIST CommandError with stderr', async (t) => {
  const args = [...base, 'user', 'create', '--uid=quarry-fixture', '--display-name=Quarry Fixture'];
  const runner = new FakeRunner().expect('radosgw-admin', args, replyOf(recorded('rgw-user-create-exists')));
  const err = await t.throwsAsync(admin(runner).userCreate({ uid: 'quarry-fixture', displayName: 'Quarry Fixture' }), {
    instanceOf: CommandError,
  });
  t.is(err.exitCode, 17);
  t.is(err.stderr, 'could not create user: unable to parse parameters, user: quarry-fixture exists\n');
});

test('rgw user info: the user, or undefined when there is none', async (t) => {
  const runner = new FakeRunner()
    .expect('radosgw-admin', [...base, 'user', 'info', '--uid=quarry-fixture'], replyOf(recorded('rgw-user-info')))
    .expect('radosgw-admin', [...base, 'user', 'info', '--uid=quarry-nosuch'], replyOf(recorded('rgw-user-info-missing')));
  const rgw = admin(runner);
  t.deepEqual(await rgw.userInfo('quarry-fixture'), fixtureUser);
  t.is(await rgw.userInfo('quarry-nosuch'), undefined);
  runner.verify();
});

test('rgw user info: other failures stay CommandError; bad output names the command', async (t) => {
  const runner = new FakeRunner()
    .expect('radosgw-admin', [...base, 'user', 'info', '--uid=a'], { exitCode: 13, stderr: 'permission denied\n' })
    .expect('radosgw-admin', [...base, 'user', 'info', '--uid=b'], { stdout: '{"user_id":"b","keys":"none"}' });
  const rgw = admin(runner);
  await t.throwsAsync(rgw.userInfo('a'), { instanceOf: CommandError });
  const err = await t.throwsAsync(rgw.userInfo('b'), { instanceOf: CommandOutputError });
  t.regex(err.message, /^radosgw-admin user info --uid=b: unexpected output: \/display_name must have required property/);
});

test('rgw a user without email has no email field', async (t) => {
  const raw = recorded('rgw-user-info').stdout.replace('"fixture@quarry.test"', '""');
  const runner = new FakeRunner().always(() => true, { stdout: raw });
  const u = await admin(runner).userInfo('quarry-fixture');
  t.false(u !== undefined && 'email' in u);
});
