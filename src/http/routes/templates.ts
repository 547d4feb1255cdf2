// Templates: list, source (any version), the public rendered form for a node, replacement and
// settings (admins only: a template source is code that runs on the master), and a preview of
// the context a node's renders see.
import { InputError } from '../../errors.js';
import { baseUrl } from '../base-url.js';
import { TEMPLATE_NAME_MAX, TEMPLATE_NAME_PATTERN, templateSettingsSchema } from '../../model/template-kinds.js';
import { route, type AnyRoute } from '../route.js';
import { sourceAddress } from '../client-address.js';
import { macSchema, object, statusSchema, uuidSchema } from '../schemas.js';
import { CONTEXT_KINDS, type ContextKind, type TemplateContexts } from '../../services/template-context.js';
import type { TemplateLibrary } from '../../services/templates.js';

const nameParam = object(
  {
    name: {
      type: 'string',
      pattern: TEMPLATE_NAME_PATTERN,
      maxLength: TEMPLATE_NAME_MAX,
      description: 'a template name: letters, digits, _ and -, in dot-separated parts (no /, .. or NUL)',
    },
  },
  ['name'],
);
const text = (description: string) => ({ description, contentType: 'text/plain' });

const summary = object(
  {
    name: { type: 'string' },
    description: { type: 'string' },
    path: { type: 'string', description: 'settings: where the rendered file goes on the node' },
    postHook: { type: 'string', description: 'settings: command run on the node after the file is written' },
    version: { type: 'integer', minimum: 1, description: 'the current source version' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
  ['name', 'description', 'path', 'postHook', 'version', 'updatedAt'],
);

const RENDER_NOTE =
  'The context: node, network, image, cluster (fsid, networks, monitor port), master (url), boot (the boot decision) and, only in an ' +
  "install render of an approved node asked from the address its install credential is bound to (its boot request's), within the credential's " +
  "TTL and before its first use, agent (username, install secret, master URL): the agent's one-time install credential; to anyone else agent is null. " +
  'Keyrings, S3 keys, password hashes and session material are never in it.';

export function templateRoutes(library: TemplateLibrary, contexts: TemplateContexts): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/templates',
      tags: ['templates'],
      summary: 'The templates with their settings and current version',
      response: { description: 'templates by name', schema: { type: 'array', items: summary } },
      handler: () => library.list(),
    }),
    route<unknown, { version?: number }, { name: string }>({
      method: 'GET',
      path: '/templates/render/{name}',
      tags: ['templates'],
      summary: 'The source of a template (ejs), the current one or ?version=N; the X-Template-Version header names the version answered',
      params: nameParam,
      query: object({ version: { type: 'integer', minimum: 1 } }),
      response: text('the raw source'),
      handler: async ({ params, query, ctx }) => {
        const s = await library.source(params.name, query.version);
        ctx.set('X-Template-Version', String(s.version));
        ctx.set('X-Template-Current-Version', String(s.current));
        return s.source;
      },
    }),
    route<unknown, { mac?: string; nodeId?: string }, { name: string }>({
      method: 'GET',
      path: '/templates/rendered/{name}',
      tags: ['templates'],
      public: true,
      summary:
        `A template rendered for the node given by ?mac= or ?nodeId= (or for none). Public: installers fetch it. ${RENDER_NOTE} ` +
        'A render that fails or runs past its time limit is 422 (TEMPLATE_FAILED, TEMPLATE_TIMEOUT); when too many renders wait already, 503 ' +
        'TEMPLATE_BUSY with Retry-After. Templates run in a separate process without the environment, files, network or process of the server.',
      params: nameParam,
      query: object({ mac: macSchema, nodeId: uuidSchema }),
      response: text('the rendered text'),
      errors: [422, 503],
      handler: async ({ params, query, ctx }) => {
        const base = baseUrl(ctx);
        await library.get(params.name); // 404 for an unknown template before anything else
        const node = await contexts.nodeByRef(query);
        return library.render(params.name, await contexts.forTemplate(params.name, node, base, { address: sourceAddress(ctx) }));
      },
    }),
    route<string, unknown, { name: string }>({
      method: 'PUT',
      path: '/templates/{name}',
      tags: ['templates'],
      admin: true,
      summary:
        'Replace (or create) a template source, sent raw as text/plain. It is compiled first: one that does not compile is refused with 400 ' +
        'TEMPLATE_INVALID naming its line. The old source stays readable as its version.',
      params: nameParam,
      bodyType: 'text',
      response: {
        description: 'updated, with the new version',
        schema: object({ status: { const: 'updated' }, version: { type: 'integer', minimum: 1 } }, ['status', 'version']),
      },
      handler: async ({ params, body }) => {
        if (typeof body !== 'string' || body === '')
          throw new InputError('the template source is empty', [{ path: '/body', message: 'must be the template text' }]);
        return { status: 'updated', version: await library.replace(params.name, body) };
      },
    }),
    route<{ path?: string; postHook?: string }, unknown, { name: string }>({
      method: 'PUT',
      path: '/templates/{name}/settings',
      tags: ['templates'],
      admin: true,
      summary: "A template's settings: the file path on the node and the command run after it is written",
      params: nameParam,
      body: templateSettingsSchema,
      response: { description: 'updated', schema: statusSchema('updated') },
      handler: async ({ params, body }) => {
        await library.settings(params.name, body);
        return { status: 'updated' };
      },
    }),
    route<{ nodeId: string; kinds: ContextKind[] }>({
      method: 'POST',
      path: '/templates/context',
      tags: ['templates'],
      readOnly: true,
      summary:
        'Preview of the context variables a render for the node sees, keyed by the requested kinds (node, network, image, cluster, master)',
      body: object({ nodeId: uuidSchema, kinds: { type: 'array', items: { enum: [...CONTEXT_KINDS] }, maxItems: 16 } }, [
        'nodeId',
        'kinds',
      ]),
      response: { description: 'an object keyed by kind; null for a kind with nothing to show yet', schema: { type: 'object' } },
      errors: [404],
      handler: async ({ body, ctx }) => {
        const node = await contexts.nodeByRef({ nodeId: body.nodeId });
        return contexts.preview(node!, body.kinds, baseUrl(ctx));
      },
    }),
  ];
}
