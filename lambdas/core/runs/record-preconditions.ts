import type { PendingCall } from '../approvals/pending-call.js';
import type { ResolvedCall } from '../approvals/resolve-calls.js';
import { nameErrorClass } from '../errors.js';
import type { UserProfile } from '../identity.js';
import type { Logger } from '../ports.js';
import type { Tool, ToolContext } from '../tools/tool.js';

/**
 * Sealed in place of a version the tool could not read at the pause: it equals no version a
 * tool returns, so the write is not applied on a record nobody saw.
 */
export const UNREADABLE_PRECONDITION = 'countersign:unreadable';

interface PreconditionInput {
  actingUser: UserProfile;
  context: ToolContext;
  logger: Logger;
}

/** The offered calls whose tool opted into a precondition, with the arguments it accepted. */
function preconditionedCalls<Call extends PendingCall>(calls: ReadonlyArray<ResolvedCall<Call>>) {
  return calls.flatMap(({ call, tool, arguments: parsed }) => {
    if (!call.offered || typeof tool?.readPrecondition !== 'function') return [];
    // Arguments the tool refuses never run: there is no record to guard.
    return parsed.kind === 'accepted' ? [{ call, tool, parsedArguments: parsed.value }] : [];
  });
}

async function readVersion(
  tool: Tool,
  parsedArguments: unknown,
  input: PreconditionInput,
): Promise<{ kind: 'read'; version: string } | { kind: 'unreadable'; errorClass: string }> {
  try {
    const version = await tool.readPrecondition?.(parsedArguments, input.actingUser, input.context);
    if (typeof version !== 'string') return { kind: 'unreadable', errorClass: 'NoVersion' };
    return { kind: 'read', version };
  } catch (error) {
    return { kind: 'unreadable', errorClass: nameErrorClass(error) };
  }
}

/**
 * At the pause, before the previews: the version of each guarded call's target under the acting
 * user. Read BEFORE the preview, so an edit between the two makes the sealed version older than
 * what the card shows, and the write is asked again rather than applied on an unseen record.
 * Takes the calls resolved once for the pause and returns them with their versions.
 *
 * @example
 * const guarded = await capturePreconditions(resolveCalls(state.pendingCalls, tools), { actingUser, context, logger });
 */
export async function capturePreconditions<Call extends PendingCall>(
  calls: ReadonlyArray<ResolvedCall<Call>>,
  input: PreconditionInput,
): Promise<Array<ResolvedCall<Call>>> {
  const versions = new Map<number, string>();
  await Promise.all(
    preconditionedCalls(calls).map(async ({ call, tool, parsedArguments }) => {
      const read = await readVersion(tool, parsedArguments, input);
      if (read.kind === 'unreadable') {
        input.logger.warn('precondition unreadable', { tool: call.tool, errorClass: read.errorClass });
      }
      versions.set(call.index, read.kind === 'read' ? read.version : UNREADABLE_PRECONDITION);
    }),
  );
  return calls.map((resolved) => {
    const { precondition: _previous, ...rest } = resolved.call;
    const version = versions.get(resolved.call.index);
    // A version read earlier is replaced, and one the tool no longer offers is dropped.
    const call = (version === undefined ? rest : { ...rest, precondition: version }) as Call;
    return { ...resolved, call };
  });
}

/** How each guarded call's target compares with the version sealed on the approved card. */
export type PreconditionCheck =
  | { kind: 'unchanged'; unreadable: ReadonlyMap<number, string> }
  | { kind: 'changed'; changedIndexes: ReadonlySet<number> };

/**
 * At execution, before any call runs: reads every guarded target again. A changed one (or one
 * sealed unreadable that reads now) means none of the turn's calls run: the run asks again. A
 * target that cannot be read now is that call's failure (by error class), not a new card.
 *
 * @example
 * const check = await checkPreconditions(resolveCalls(state.pendingCalls, tools), { actingUser, context, logger });
 * if (check.kind === 'changed') // pause again on a fresh card
 */
export async function checkPreconditions(
  calls: ReadonlyArray<ResolvedCall>,
  input: PreconditionInput,
): Promise<PreconditionCheck> {
  const changedIndexes = new Set<number>();
  const unreadable = new Map<number, string>();
  await Promise.all(
    preconditionedCalls(calls).map(async ({ call, tool, parsedArguments }) => {
      // A tool that opted in after this card was sealed has nothing to compare: ask again.
      if (call.precondition === undefined) {
        changedIndexes.add(call.index);
        return;
      }
      const read = await readVersion(tool, parsedArguments, input);
      if (read.kind === 'unreadable') unreadable.set(call.index, read.errorClass);
      else if (read.version !== call.precondition) changedIndexes.add(call.index);
    }),
  );
  return changedIndexes.size > 0 ? { kind: 'changed', changedIndexes } : { kind: 'unchanged', unreadable };
}
