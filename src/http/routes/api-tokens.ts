// The caller's own API tokens (docs/api-conventions.md, "API tokens"). Creating one needs a
// password session: a token cannot make more tokens, so a leaked token cannot outlive its own
// revocation or expiry by minting another.
import { AuthError, ForbiddenError } from '../../errors.js';
import { TOKEN_NAME_PATTERN, TOKEN_SCOPES } from '../../model/token-kinds.js';
import { DEFAULT_TOKEN_DAYS, type NewToken } from '../auth/api-tokens.js';
import type { Auth, Principal } from '../auth/index.js';
import { route, type AnyRoute } from '../route.js';
import { object, uuidSchema } from '../schemas.js';

const timestamp = { type: 'string', format: 'date-time' };

const tokenFields = {
  id: uuidSchema,
  name: { type: 'string' },
  scope: { enum: [...TOKEN_SCOPES] },
  createdAt: timestamp,
  expiresAt: timestamp,
  lastUsedAt: { anyOf: [timestamp, { type: 'null' }], description: 'coarse: recorded at most once a minute' },
};
const TOKEN_VIEW_FIELDS = ['id', 'name', 'scope', 'createdAt', 'expiresAt', 'lastUsedAt'];
const tokenView = object(tokenFields, TOKEN_VIEW_FIELDS);

function who(principal: Principal | null): Principal {
  if (!principal) throw new AuthError();
  return principal;
}

export function apiTokenRoutes(auth: Auth): AnyRoute[] {
  return [
    route<NewToken>({
      method: 'POST',
      path: '/user/tokens',
      summary:
        'Create an API token for the current user (`Authorization: Bearer <token>`); the token is in this answer only. Needs a password session, not a token',
      tags: ['users'],
      body: object(
        {
          name: { type: 'string', pattern: TOKEN_NAME_PATTERN, description: '1-64 of A-Z a-z 0-9 . _ @ -' },
          scope: { enum: [...TOKEN_SCOPES], description: 'read: only operations that change nothing; write: all the user may do' },
          expiresInDays: { type: 'integer', minimum: 1, maximum: 3650, description: `default ${DEFAULT_TOKEN_DAYS}` },
        },
        ['name', 'scope'],
      ),
      response: {
        status: 201,
        description: 'the token, with its secret `token` (qry_...), shown this once',
        schema: object({ ...tokenFields, token: { type: 'string', pattern: '^qry_' } }, [...TOKEN_VIEW_FIELDS, 'token']),
      },
      errors: [409], // the user holds too many tokens
      handler: async ({ body, principal }) => {
        const caller = who(principal);
        if (caller.token) throw new ForbiddenError('creating an API token needs a password session (POST /user/login), not a token');
        return auth.apiTokens.create(caller.user.id, caller.user.username, {
          name: body.name,
          scope: body.scope,
          ...(body.expiresInDays === undefined ? {} : { expiresInDays: body.expiresInDays }),
        });
      },
    }),
    route({
      method: 'GET',
      path: '/user/tokens',
      summary: "The current user's API tokens, newest first (never their secrets)",
      tags: ['users'],
      response: { description: 'the tokens', schema: object({ tokens: { type: 'array', items: tokenView } }, ['tokens']) },
      handler: ({ principal }) => ({ tokens: auth.apiTokens.list(who(principal).user.id) }),
    }),
    route<unknown, unknown, { tokenId: string }>({
      method: 'DELETE',
      path: '/user/tokens/{tokenId}',
      summary: 'Revoke one of your API tokens: it is refused (401) from now on, and event streams opened with it end',
      tags: ['users'],
      params: object({ tokenId: uuidSchema }, ['tokenId']),
      response: { status: 204, description: 'revoked' },
      handler: async ({ params, principal, ctx }) => {
        await auth.apiTokens.revoke(who(principal).user.id, params.tokenId);
        ctx.status = 204;
        return undefined;
      },
    }),
  ];
}
