// The catalogue's tables hold together: each daemon's steps are steps, every node-level step
// has a strict schema, and a refusal names the argument.
import test from 'ava';
import {
  DAEMONS,
  DAEMON_TYPES,
  NODE_DAEMON_TYPES,
  NODE_OPERATIONS,
  NODE_STEP_NAMES,
  STEPS,
  daemon,
  isStepName,
  stepArgsProblem,
} from '../../src/catalogue/index.js';

test('catalogue every step a daemon names is in STEPS, and each node daemon has its operation', (t) => {
  for (const type of DAEMON_TYPES) {
    const { create = [], key, start, stop, remove } = daemon(type).steps;
    for (const name of [...create, key, start, stop, remove].filter((n) => n !== undefined)) t.true(isStepName(name), `${type}: ${name}`);
  }
  for (const type of NODE_DAEMON_TYPES) t.true(NODE_OPERATIONS.includes(DAEMONS[type].operation), type);
});

test('catalogue every node-level step refuses arguments it does not know', (t) => {
  for (const name of NODE_STEP_NAMES) {
    t.is((STEPS[name].args as { additionalProperties?: boolean }).additionalProperties, false, name);
    t.regex(stepArgsProblem(name, { surprise: 1 })?.message ?? '', /argument (surprise is not taken|\w+ is required)/, name);
  }
});

test('catalogue step argument refusals name the argument: missing, malformed, unknown value', (t) => {
  t.is(stepArgsProblem('ceph.rgw.start', { name: 'gw1', port: 7480 }), null);
  t.is(stepArgsProblem('ceph.rgw.start', { name: 'gw1' })?.message, 'argument port is required');
  t.is(stepArgsProblem('ceph.rgw.start', { name: 'gw1', port: 0 })?.message, 'argument port must be a TCP port');
  t.is(stepArgsProblem('ceph.rgw.start', { name: '../gw1', port: 7480 })?.field, 'name');
  t.is(stepArgsProblem('ceph.daemon.restart', { daemon: 'ganesha', name: 'n1' })?.message, "unknown daemon type 'ganesha'");
  t.regex(
    stepArgsProblem('ceph.mon.bootstrap', { fsid: 'f', monName: 'a', addr: '10.0.0.1', initialMembers: [{ name: 'a' }] })?.message ?? '',
    /^argument initialMembers must be a non-empty list of \{ name, addr \}/,
  );
  t.is(stepArgsProblem('disk.wipe', { devicePath: '/dev/../etc/passwd' })?.field, 'devicePath');
});
