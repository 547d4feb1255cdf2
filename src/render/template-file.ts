// The default way a loop renders one of templates/*.ejs: ejs over the file as it is on disk.
// Loops take the function, not this module, so a store-backed renderer (operators' edited
// templates) can replace it without touching them.
import { readFile } from 'node:fs/promises';
import ejs from 'ejs';
import { InputError } from '../errors.js';
import { quote } from './quote.js';

export type RenderTemplate = (templateName: string, context: Record<string, unknown>) => Promise<string>;

const NAME = /^[a-z0-9][a-z0-9.-]*$/;

export function fileTemplates(dir: URL): RenderTemplate {
  return async (name, context) => {
    if (!NAME.test(name)) throw new InputError(`template name ${JSON.stringify(name)} is not a plain file name`);
    const source = await readFile(new URL(`${name}.ejs`, dir), 'utf8');
    return ejs.render(source, { ...context, q: quote }, { async: false });
  };
}
