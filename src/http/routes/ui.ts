// GET /ui and /ui/{path}: the dashboard (src/ui), public because the page holds no data — every
// API call it makes needs the session cookie. Its own paths (/ui/nodes, ...) answer the page;
// a name with an extension is a built file, or 404. A strict Content-Security-Policy: the page's
// scripts and styles come from Quarry only, none inline.
import type { Context } from 'koa';
import { NotFoundError } from '../../errors.js';
import { route, type AnyRoute } from '../route.js';
import { object } from '../schemas.js';
import { UI_FILE_NAME, UI_MEDIA_TYPES, type UiAssets, type UiFile } from '../ui-assets.js';

export const UI_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const mediaTypes = [...new Set(Object.values(UI_MEDIA_TYPES).map((t) => t.split(';')[0]!))];

/** Answers through ctx: the handler then returns undefined (route.ts). */
function send(ctx: Context, file: UiFile): void {
  ctx.set('Content-Security-Policy', UI_CSP);
  ctx.set('Referrer-Policy', 'same-origin');
  // A hashed name changes with its content; the page itself is checked every time, so a new
  // build's page (naming new hashes) is seen at once.
  ctx.set('Cache-Control', file.hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
  ctx.status = 200;
  ctx.type = file.type;
  ctx.body = file.body;
}

export function uiRoutes(assets: UiAssets): AnyRoute[] {
  const page = (): UiFile => {
    if (!assets.index) throw new NotFoundError('the dashboard is not built (npm run build makes dist/ui)');
    return assets.index;
  };
  const response = {
    description: 'the dashboard page, or one of its files',
    contentType: 'text/html',
    otherTypes: mediaTypes.filter((t) => t !== 'text/html'),
  };
  return [
    route({
      method: 'GET',
      path: '/ui',
      tags: ['ui'],
      public: true,
      summary: 'The web dashboard (its API calls need a session: it shows a login form first)',
      response,
      errors: [404],
      handler: ({ ctx }) => {
        send(ctx, page());
        return undefined;
      },
    }),
    route<unknown, unknown, { path: string }>({
      method: 'GET',
      path: '/ui/{path}',
      tags: ['ui'],
      public: true,
      summary: "A file of the dashboard (hashed names are cached for ever), or the page for one of the dashboard's own paths",
      params: object({ path: { type: 'string', pattern: UI_FILE_NAME.source } }, ['path']),
      response,
      errors: [404],
      handler: ({ params, ctx }) => {
        const file = assets.files.get(params.path);
        if (!file && params.path.includes('.')) throw new NotFoundError(`the dashboard has no file ${params.path}`);
        send(ctx, file ?? page());
        return undefined;
      },
    }),
  ];
}
