// The two render lanes: renders of other templates queue in the operator lane's process and
// a bounded queue; boot renders have a process of their own and never wait behind them.
import test from 'ava';
import { TemplateLanes } from '../../src/render/lanes.js';
import { TemplateBusyError } from '../../src/render/sandbox.js';

test('template lanes a boot render completes while the operator lane is full, and the 33rd waiting render is refused with 503', async (t) => {
  const lanes = new TemplateLanes({ timeoutMs: 30_000, operatorQueue: 32 });
  t.teardown(() => lanes.close());
  const order: string[] = [];
  // One render running (it never ends before close) and 32 waiting behind it.
  const slow = Array.from({ length: 33 }, (_, i) =>
    lanes.render('slow', 1, '<% for (;;) {} %>', {}, 'operator').then(
      () => order.push(`slow ${i} rendered`),
      () => order.push(`slow ${i} stopped`),
    ),
  );
  t.deepEqual(lanes.operator.stats().queued, 32);
  t.is(lanes.operator.stats().running, 'slow');
  const refused = await t.throwsAsync(lanes.render('slow', 1, '<% for (;;) {} %>', {}, 'operator'), { instanceOf: TemplateBusyError });
  t.is(refused.status, 503);
  t.is(refused.code, 'TEMPLATE_BUSY');
  t.is(refused.retryAfterSeconds, 1);
  t.regex(refused.message, /32 template renders of the operator lane are waiting already/);

  t.is(
    await lanes.render('ipxe-default', 1, '#!ipxe\nchain <%= url %>', { url: 'http://m/boot/config' }, 'boot'),
    '#!ipxe\nchain http://m/boot/config',
  );
  order.push('boot rendered');
  t.deepEqual(order, ['boot rendered']);
  t.is(lanes.operator.stats().queued, 32);
  t.not(lanes.boot.stats().pid, lanes.operator.stats().pid);

  await lanes.close();
  await Promise.all(slow);
  t.is(order.filter((e) => e.endsWith('stopped')).length, 33);
});

test('template lanes a render names its lane; without one it takes the operator lane', async (t) => {
  const lanes = new TemplateLanes({ timeoutMs: 5_000, operatorQueue: 4 });
  t.teardown(() => lanes.close());
  t.is(await lanes.render('a', 1, 'a', {}), 'a');
  t.is(lanes.boot.stats().pid, null);
  t.not(lanes.operator.stats().pid, null);
  t.is(await lanes.render('b', 1, 'b', {}, 'boot'), 'b');
  t.not(lanes.boot.stats().pid, null);
});
