// Which power-on request the node plan acts on: the latest request wins between a shutdown and a
// power-on (src/model/node-power.ts numbers them so), so a power-on a later shutdown passed is
// moot — the node stays off and says nothing about power, rather than a stale power-on.
import test from 'ava';
import { powerOnRequest } from '../../reconcilers/node/power.js';
import { requestPowerOn, requestShutdown } from '../../src/model/node-power.js';
import { node } from '../builders.js';

test('node power request: a power-on is pending until acknowledged, and moot once a later shutdown passed it', (t) => {
  const off = requestShutdown(node('offline').build().spec);
  const on = requestPowerOn(off);
  t.is(powerOnRequest(on, { observedShutdownGeneration: 1 }), 1);
  t.is(powerOnRequest(on, { observedShutdownGeneration: 1, observedPowerOnGeneration: 1 }), null, 'carried out');
  const offAgain = requestShutdown(on);
  t.like(offAgain, { power: 'off', shutdownGeneration: 2, powerOnGeneration: 1 });
  t.is(powerOnRequest(offAgain, { observedShutdownGeneration: 1 }), null, 'the later shutdown wins');
  const onAgain = requestPowerOn(offAgain);
  t.is(powerOnRequest(onAgain, { observedShutdownGeneration: 2, observedPowerOnGeneration: 1 }), 2);
});

test('node power request: a file-owned power stays declared through a shutdown request', (t) => {
  const spec = node('active').build().spec;
  t.like(requestShutdown(spec, true), { power: 'on', shutdownGeneration: 1 });
  t.like(requestShutdown(spec), { power: 'off', shutdownGeneration: 1 });
});
