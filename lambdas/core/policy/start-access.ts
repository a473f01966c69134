import * as z from 'zod/mini';
import { GRANTS, isAdmin, type UserProfile } from '../identity.js';

const names = z.array(z.string().check(z.minLength(1), z.maxLength(200))).check(z.maxLength(1000));

/**
 * Who may start runs with a configuration or a task: anyone holding one of `grants`, a member
 * of one of `groups`, or one of `users`. Absent means every holder of `agent_run` (the
 * behaviour before access lists existed); present and empty means admins only.
 */
export const startAccessSchema = z.strictObject({
  grants: z._default(z.array(z.enum(GRANTS)).check(z.maxLength(GRANTS.length)), []),
  groups: z._default(names, []),
  users: z._default(names, []),
});
export type StartAccess = z.infer<typeof startAccessSchema>;

/** Whether `principal` is on the access list. Admins always are: they administer the list. */
export function mayStartWith(principal: UserProfile, access: StartAccess | undefined): boolean {
  if (access === undefined || isAdmin(principal)) return true;
  return (
    access.users.includes(principal.userId) ||
    access.grants.some((grant) => principal.grants.includes(grant)) ||
    access.groups.some((group) => (principal.groups ?? []).includes(group))
  );
}
