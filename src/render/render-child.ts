// The render process: started by the sandbox (sandbox.ts, child-process.ts) with an empty
// environment, Node's permission model (it may read only this file, template-realm.js and the
// helper modules; no writes, no child processes, no workers), a small heap and, where the host
// allows, its own empty network namespace. Its only channel is stdin/stdout: one JSON request
// a line in, one JSON reply a line out, one render at a time. Template code itself runs in a
// vm context of its own (template-realm.ts); this process is the second wall around it.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { TemplateRealm, type RealmRender, type RealmResult } from './template-realm.js';

export interface ChildRequest extends RealmRender {
  id: number;
}

export type ChildReply = ({ id: number } & RealmResult) | { ready: true };

const send = (reply: ChildReply): void => {
  process.stdout.write(`${JSON.stringify(reply)}\n`);
};

// A promise a template rejected is the template's own business, never a reason to stop.
process.on('unhandledRejection', () => {});

const helpers = process.argv.slice(2).map((file) => readFileSync(file, 'utf8'));
const realm = new TemplateRealm(helpers);
let work = Promise.resolve();

createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  const req = JSON.parse(line) as ChildRequest;
  work = work.then(async () => {
    let result: RealmResult;
    try {
      result = await realm.render(req);
    } catch (err) {
      result = { error: `the render process failed: ${(err as Error).message}`, line: null, code: 'TEMPLATE_FAILED' };
    }
    send({ id: req.id, ...result });
    realm.warm();
  });
});
// The master is gone: nothing more will come.
process.stdin.on('end', () => process.exit(0));

realm.warm();
send({ ready: true });
