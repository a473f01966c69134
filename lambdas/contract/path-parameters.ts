import * as z from 'zod/mini';
import { TEXTS } from '../core/texts.js';
import { CONFIGURATION_ID_PATTERN } from './common-schemas.js';
import { asUnknown } from './route-definition.js';

/**
 * The path parameters of the manifest's routes, each with how a value its schema refuses is
 * answered: an id is refused as the unknown resource it names, so a malformed one tells a caller
 * nothing; a route entry spreads one of these beside its other fields.
 */

/** A run id as countersign mints them. */
const RUN_ID_PATTERN = /^[A-Za-z0-9-]{1,100}$/;
const runId = z.string().check(z.regex(RUN_ID_PATTERN));

/** Six digits are more than any card holds, and keep what a client sends an exact integer. */
const CALL_INDEX_PATTERN = /^(0|[1-9][0-9]{0,5})$/;

/** `/runs/{id}`, `/external-runs/{id}`: a malformed run id is answered like an unknown run. */
export const runPathParameters = {
  pathParameters: z.object({ id: runId }),
  pathRefusals: { id: asUnknown(TEXTS.runNotFound) },
} as const;

/** `/runs/{id}/calls/{index}`: the run as above, then the call's position on its card (a 400). */
export const callPathParameters = {
  pathParameters: z.object({
    id: runId,
    index: z.string().check(z.regex(CALL_INDEX_PATTERN)),
  }),
  pathRefusals: {
    id: asUnknown(TEXTS.runNotFound),
    index: { kind: 'bad-request', message: TEXTS.callIndexInvalid },
  },
} as const;

/** `/inbox/runs/{id}`: the page shell answers every address alike; its script reads the run id. */
export const cardPagePathParameters = {
  pathParameters: runPathParameters.pathParameters,
  pathRefusals: { id: { kind: 'unread' } },
} as const;

/** `/configurations/{id}/…`: a malformed configuration id is as unknown as a missing one. */
export const configurationPathParameters = {
  pathParameters: z.object({ id: z.string().check(z.regex(CONFIGURATION_ID_PATTERN)) }),
  pathRefusals: { id: asUnknown(TEXTS.configurationNotFound) },
} as const;

/** No user, record or skill id is longer; a longer one is as unknown as a missing one. */
const MAX_ID_LENGTH = 200;
const identifier = z.string().check(z.minLength(1), z.maxLength(MAX_ID_LENGTH));

/** `/users/{id}/away`: a user id. */
export const userPathParameters = {
  pathParameters: z.object({ id: identifier }),
  pathRefusals: { id: asUnknown(TEXTS.adminIdTooLong('user')) },
} as const;

/** `/admin/<collection>/{id}`: a record of the collection whose one item is named `kind`. */
export function adminItemPathParameters(kind: string) {
  return {
    pathParameters: adminItemPathSchema,
    pathRefusals: { id: asUnknown(TEXTS.adminIdTooLong(kind)) },
  } as const;
}
const adminItemPathSchema = z.object({ id: identifier });

/** `/admin/skills/{skillId}…`: a skill id, refused as the unknown skill it names. */
export const skillPathParameters = {
  pathParameters: z.object({ skillId: identifier }),
  pathRefusals: { skillId: asUnknown((path) => TEXTS.skillNotFound(path.skillId ?? '')) },
} as const;

/** The longest task or configuration id (`identifier` in core/configurations.ts). */
const MAX_ATTACHMENT_TARGET_ID_LENGTH = 100;

/** `/admin/skills/attachments/{owner}/{id}`: a task's or a configuration's skills. */
export const attachmentPathParameters = {
  pathParameters: z.object({
    owner: z.enum(['tasks', 'configurations']),
    id: z.string().check(z.minLength(1), z.maxLength(MAX_ATTACHMENT_TARGET_ID_LENGTH)),
  }),
  pathRefusals: {
    owner: asUnknown(TEXTS.skillsResourceNotFound),
    // Checked after the owner, so it names a task or a configuration.
    id: asUnknown((path) => TEXTS.adminIdTooLong(path.owner === 'tasks' ? 'task' : 'configuration')),
  },
} as const;
