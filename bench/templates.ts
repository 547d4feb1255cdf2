// What the render sandbox costs. (1) Renders per second of the ipxe-boot template through the
// render process (a fresh vm context per render) against the same compiled ejs function
// called in this thread: the price of the walls. (2) The longest event-loop stall while a
// `while (true)` template runs to its deadline, against the same ticker with nothing running:
// the deadline must cost the master nothing while it waits. (3) How long the next render
// after the stopped one takes.
import { readFile } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import ejs from 'ejs';
import { q } from '../src/render/quote.js';
import { TemplateSandbox } from '../src/render/sandbox.js';
import { defaultTemplatesDir } from '../src/render/ceph-conf.js';

const RENDERS = 2_000;
const context = {
  node: {
    id: '0d8e7c4e-7b4c-5e7e-9a3c-1f2e3d4c5b6a',
    hostname: 'node-1',
    role: 'worker',
    mac: '52:54:00:00:00:01',
    macs: ['52:54:00:00:00:01'],
    image: null,
    ip: '',
    status: 'discovered',
  },
  image: {
    id: 'img',
    name: 'Image',
    kernelUrl: 'http://10.0.0.1:8080/images/img/files/vmlinuz',
    initrdUrl: 'http://10.0.0.1:8080/images/img/files/initrd.img',
    initrdName: 'initrd.img',
    cmdline: '',
  },
  master: { url: 'http://10.0.0.1:8080', bootConfigUrl: 'http://10.0.0.1:8080/boot/config' },
  boot: { action: 'install', reason: 'installing the default image', retrySeconds: 30 },
  network: null,
  cluster: null,
  agent: null,
};

async function stallMs(during: () => Promise<unknown>): Promise<number> {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  await during();
  h.disable();
  return h.max / 1e6;
}

export async function run(): Promise<void> {
  const source = await readFile(new URL('ipxe-boot.ejs', defaultTemplatesDir), 'utf8');
  const direct = ejs.compile(source, { compileDebug: true }) as (c: object) => string;
  let t = performance.now();
  // The in-thread baseline gets the quoting helpers as the sandbox's templates do.
  const withQ = { ...context, q };
  for (let i = 0; i < RENDERS; i++) direct(withQ);
  const directRate = RENDERS / ((performance.now() - t) / 1000);
  const sandbox = new TemplateSandbox({ timeoutMs: 1_000 });
  await sandbox.render('ipxe-boot', 1, source, context); // process start and compile
  t = performance.now();
  await Promise.all(Array.from({ length: RENDERS }, () => sandbox.render('ipxe-boot', 1, source, context)));
  const sandboxRate = RENDERS / ((performance.now() - t) / 1000);
  console.log(
    `renders/s: in-thread ${directRate.toFixed(0)}, sandboxed ${sandboxRate.toFixed(0)} (${(sandboxRate / directRate).toFixed(3)}×; ~${(1000 / sandboxRate).toFixed(3)} ms each)`,
  );

  const idle = await stallMs(() => new Promise((r) => setTimeout(r, 1_000)));
  const spinning = await stallMs(() => sandbox.render('spin', 1, '<% while (true) {} %>', {}).catch(() => undefined));
  console.log(
    `longest event-loop stall: idle ${idle.toFixed(1)} ms, during a 1000 ms endless render ${spinning.toFixed(1)} ms (${(spinning / idle).toFixed(2)}×)`,
  );

  t = performance.now();
  await sandbox.render('ipxe-boot', 1, source, context);
  console.log(`first render after the stopped one: ${(performance.now() - t).toFixed(1)} ms`);
  await sandbox.close();
}
