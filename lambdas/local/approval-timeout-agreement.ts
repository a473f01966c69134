/**
 * The approval timeout the local runtime uses: the one the ASL's AwaitApproval waits. The
 * state machine times the wait out and the use cases date the card's `expiresAt` from the
 * setting, so a setting that differs from the ASL would show a deadline the run does not keep:
 * it is refused, never silently replaced by the ASL's value.
 *
 * @example
 * agreeApprovalTimeout(synthesizeStateMachineDefinition(), 3 * 86_400) // throws: the ASL waits 7 days
 */
export function agreeApprovalTimeout(definition: Record<string, unknown>, requestedSeconds?: number): number {
  // The human wait is the one task that waits for a token (the runner finds it the same way).
  const states = Object.values((definition.States ?? {}) as Record<string, Record<string, unknown>>);
  const waits = states.filter(
    (state) => typeof state.Resource === 'string' && state.Resource.endsWith('.waitForTaskToken'),
  );
  const aslSeconds = waits[0]?.TimeoutSeconds;
  if (waits.length !== 1 || typeof aslSeconds !== 'number') {
    throw new Error('The state machine definition has no single approval wait with TimeoutSeconds.');
  }
  if (requestedSeconds !== undefined && requestedSeconds !== aslSeconds) {
    throw new Error(
      `The approval timeout (${requestedSeconds} s) differs from the state machine's approval wait (${aslSeconds} s); synthesize the definition with the same approvalTimeout.`,
    );
  }
  return aslSeconds;
}
