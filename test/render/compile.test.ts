// import() is the one way template code could ask the runtime for something: it is refused
// in code, wherever it is, and only there.
import test from 'ava';
import { TemplateCompileError, checkTemplate, templateFunctionBody } from '../../src/render/compile.js';

test('template compile import in template code is refused with its line; the word in text or a comment is not', (t) => {
  for (const [source, line] of [
    ["<% import('node:fs') %>", 1],
    ["a\nb\n<%= x %><%\n\n  import ('node:fs').then(() => 1)\n%>", 5],
    ['x\n<%- import.meta %>', 2],
  ] as const) {
    for (const check of [checkTemplate, templateFunctionBody]) {
      const err = t.throws(() => check('t', source), { instanceOf: TemplateCompileError }, source);
      t.is(err.line, line, source);
      t.regex(err.message, /import\(\) is not available in Quarry templates/);
    }
  }
  for (const source of ['# import these settings\n<%= important %>', '<%# import(x) %>', '<%% import %%>']) {
    t.notThrows(() => checkTemplate('t', source), source);
    t.notThrows(() => templateFunctionBody('t', source), source);
  }
});
