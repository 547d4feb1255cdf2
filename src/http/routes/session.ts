// Login, token refresh and logout. Login and refresh are two of the five public routes.
import type { Auth } from '../auth/index.js';
import { route, type AnyRoute } from '../route.js';
import { object, statusSchema, userSchema } from '../schemas.js';

interface LoginBody {
  username: string;
  password: string;
}

export function sessionRoutes(auth: Auth): AnyRoute[] {
  return [
    route<LoginBody>({
      method: 'POST',
      path: '/user/login',
      summary: 'Log in; sets the access_token and refresh_token cookies',
      tags: ['session'],
      public: true,
      // Length limits only: a username that could never exist still gets the generic 401.
      body: object(
        { username: { type: 'string', minLength: 1, maxLength: 256 }, password: { type: 'string', minLength: 1, maxLength: 1024 } },
        ['username', 'password'],
      ),
      response: { description: 'the logged-in user', schema: userSchema },
      // A public route, so the layer adds no 401: wrong username or password is one.
      errors: [401, 429],
      handler: ({ body, ctx }) => auth.login(ctx, body.username, body.password),
    }),
    route({
      method: 'POST',
      path: '/user/refresh',
      summary: 'New access token from the refresh_token cookie; the refresh token is rotated',
      tags: ['session'],
      public: true,
      response: {
        description: 'the new access token (also set as cookie); expiresIn in seconds',
        schema: object({ accessToken: { type: 'string' }, expiresIn: { type: 'integer', const: auth.accessSeconds } }, [
          'accessToken',
          'expiresIn',
        ]),
      },
      errors: [401], // a missing, expired, revoked or reused refresh token
      handler: ({ ctx }) => auth.refresh(ctx),
    }),
    route({
      method: 'POST',
      path: '/user/logout',
      summary: 'End the session and clear both cookies',
      tags: ['session'],
      response: { description: 'logged out', schema: statusSchema('logged-out') },
      handler: async ({ ctx, principal }) => {
        if (principal) await auth.logout(ctx, principal);
        return { status: 'logged-out' };
      },
    }),
  ];
}
