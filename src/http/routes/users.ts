// The user operations (docs/api-conventions.md, "Users, sessions and roles"). Roles: an admin
// may do everything; anyone else may read, change their own password (knowing the old one), and
// change their own name and email.
import { AuthError, ForbiddenError, InputError } from '../../errors.js';
import { toPublic, type Auth, type Principal } from '../auth/index.js';
import type { UserChanges } from '../auth/users.js';
import { route, type AnyRoute, type RouteDef } from '../route.js';
import {
  emailSchema,
  fullNameSchema,
  newPasswordSchema,
  object,
  statusSchema,
  userSchema,
  usernameSchema,
  uuidSchema,
} from '../schemas.js';

interface PasswordBody {
  oldPassword: string;
  newPassword: string;
}

interface CreateBody {
  username: string;
  password: string;
  name: string;
  email: string;
  isAdmin?: boolean;
}

type UserParams = { userId: string };

const userParams = object({ userId: uuidSchema }, ['userId']);
const isAdminSchema = { type: 'boolean', description: 'admins only' };

const SELF_EDITABLE = new Set(['name', 'email']);

function who(principal: Principal | null): Principal {
  if (!principal) throw new AuthError();
  return principal;
}

/** Non-admins may edit only themselves, and only fields that grant nothing. */
function assertMayUpdate(caller: Principal, userId: string, changes: UserChanges): void {
  if (caller.user.isAdmin) return;
  if (caller.user.id !== userId) throw new ForbiddenError('only an admin may change another user');
  const refused = Object.keys(changes).filter((k) => !SELF_EDITABLE.has(k));
  if (refused.length)
    throw new ForbiddenError(`only an admin may change ${refused.join(', ')}; use POST /user/password for your own password`);
}

function updateRoute(auth: Auth, method: 'PATCH' | 'PUT'): RouteDef<UserChanges, unknown, UserParams> {
  return route<UserChanges, unknown, UserParams>({
    method,
    path: '/users/{userId}',
    summary: method === 'PATCH' ? 'Update a user; only the given fields change' : 'Same as PATCH (only the given fields change)',
    tags: ['users'],
    params: userParams,
    body: object({
      username: usernameSchema,
      name: fullNameSchema,
      email: emailSchema,
      newPassword: newPasswordSchema,
      isAdmin: isAdminSchema,
    }),
    response: { description: 'the updated user', schema: userSchema },
    errors: [409, 429], // 429: the password hashing queue is full
    handler: async ({ params, body, principal }) => {
      const caller = who(principal);
      assertMayUpdate(caller, params.userId, body);
      await auth.users.mustGet(params.userId);
      const updated = await auth.users.update(params.userId, body);
      if (body.newPassword !== undefined) await auth.sessions.revokeUser(params.userId, caller.sessionId);
      return toPublic(updated);
    },
  });
}

export function userRoutes(auth: Auth): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/user/me',
      summary: 'The current user',
      tags: ['users'],
      response: { description: 'the authenticated user', schema: userSchema },
      handler: ({ principal }) => who(principal).user,
    }),
    route<PasswordBody>({
      method: 'POST',
      path: '/user/password',
      summary: "Change the current user's password; other sessions of the user end",
      tags: ['users'],
      body: object({ oldPassword: { type: 'string', minLength: 1, maxLength: 1024 }, newPassword: newPasswordSchema }, [
        'oldPassword',
        'newPassword',
      ]),
      response: { description: 'changed', schema: statusSchema('updated') },
      errors: [429],
      handler: async ({ body, principal, ctx }) => {
        const caller = who(principal);
        // Guessing the old password from a stolen session is throttled like a login.
        auth.limiter.check(caller.user.username, ctx.ip);
        if (!(await auth.hasher.verify(body.oldPassword, caller.doc.spec.passwordHash, ctx.ip))) {
          auth.limiter.fail(caller.user.username, ctx.ip);
          throw new InputError('oldPassword is not the current password', [
            { path: '/body/oldPassword', message: 'is not the current password' },
          ]);
        }
        await auth.users.update(caller.user.id, { newPassword: body.newPassword });
        await auth.sessions.revokeUser(caller.user.id, caller.sessionId);
        return { status: 'updated' };
      },
    }),
    route({
      method: 'GET',
      path: '/users',
      summary: 'Every user',
      tags: ['users'],
      response: { description: 'the users', schema: { type: 'array', items: userSchema } },
      handler: async () => (await auth.users.list()).map(toPublic),
    }),
    route<CreateBody>({
      method: 'POST',
      path: '/users',
      summary: 'Create a user',
      tags: ['users'],
      admin: true,
      body: object(
        { username: usernameSchema, password: newPasswordSchema, name: fullNameSchema, email: emailSchema, isAdmin: isAdminSchema },
        ['username', 'password', 'name', 'email'],
      ),
      response: { status: 201, description: 'created', schema: statusSchema('created', true) },
      errors: [409, 429], // 429: the password hashing queue is full
      handler: async ({ body }) => ({ status: 'created', id: (await auth.users.create(body)).id }),
    }),
    route<unknown, unknown, UserParams>({
      method: 'GET',
      path: '/users/{userId}',
      summary: 'One user',
      tags: ['users'],
      params: userParams,
      response: { description: 'the user', schema: userSchema },
      handler: async ({ params }) => toPublic(await auth.users.mustGet(params.userId)),
    }),
    updateRoute(auth, 'PATCH'),
    updateRoute(auth, 'PUT'),
  ];
}
