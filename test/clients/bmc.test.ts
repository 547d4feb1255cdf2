// The real BMC client's command lines (ipmitool -I lanplus, the password only in IPMI_PASSWORD)
// and its answers, against a scripted runner with ipmitool's own output.
import test from 'ava';
import { BmcError, IpmitoolBmc } from '../../src/clients/bmc.js';
import { FakeRunner } from '../helpers/fake-runner.js';

const T = { address: '10.9.8.7', port: 623, username: 'ops', password: 'pw-Secret-1' };
const base = ['-I', 'lanplus', '-H', '10.9.8.7', '-p', '623', '-U', 'ops', '-E', '-N', '2', '-R', '2', 'chassis', 'power'];

test('bmc ipmitool: status, on, off and cycle run chassis power with the password only in IPMI_PASSWORD', async (t) => {
  const r = new FakeRunner()
    .expect('ipmitool', [...base, 'status'], { stdout: 'Chassis Power is off\n' })
    .expect('ipmitool', [...base, 'on'], { stdout: 'Chassis Power Control: Up/On\n' })
    .expect('ipmitool', [...base, 'status'], { stdout: 'Chassis Power is on\n' })
    .expect('ipmitool', [...base, 'off'], { stdout: 'Chassis Power Control: Down/Off\n' })
    .expect('ipmitool', [...base, 'cycle'], { stdout: 'Chassis Power Control: Cycle\n' });
  const bmc = new IpmitoolBmc(r);
  t.is(await bmc.powerStatus(T, {}), 'off');
  await bmc.powerOn(T, {});
  t.is(await bmc.powerStatus(T, {}), 'on');
  await bmc.powerOff(T, {});
  await bmc.powerCycle(T, {});
  r.verify();
  for (const c of r.calls) {
    t.deepEqual(c.opts.env, { IPMI_PASSWORD: T.password });
    t.false(c.shown.includes(T.password));
  }
});

test('bmc ipmitool: a refused session or an odd answer is a BmcError naming the BMC, never the password', async (t) => {
  const r = new FakeRunner()
    // ipmitool does not print the password, but a wrapper might: it is scrubbed all the same.
    .expect('ipmitool', [...base, 'on'], { exitCode: 1, stderr: `Error: Unable to establish IPMI v2 / RMCP+ session (${T.password})\n` })
    .expect('ipmitool', [...base, 'status'], { stdout: 'Chassis Power is sort of\n' });
  const bmc = new IpmitoolBmc(r);
  const e1 = await t.throwsAsync(bmc.powerOn(T, {}), { instanceOf: BmcError });
  t.regex(e1.message, /^BMC 10\.9\.8\.7:623 \(user ops\): chassis power on failed: .*Unable to establish IPMI v2/);
  t.false(e1.message.includes(T.password));
  const e2 = await t.throwsAsync(bmc.powerStatus(T, {}), { instanceOf: BmcError });
  t.regex(e2.message, /unexpected answer to power status/);
});
