/**
 * A Lambda entry point that composes its handler (config, clients, adapters) at the first
 * invocation and keeps it for the life of the execution environment: a cold start composes
 * once, a warm invocation reuses it. Composing at the first event rather than at import keeps a
 * bundle that is only loaded (the bundle tests, a failed config) from building anything.
 *
 * @example
 * export const handler: HttpLambdaHandler = composeOnFirstInvocation(() => createAdminApi(awsBaseDependencies()));
 */
export function composeOnFirstInvocation<Arguments extends unknown[], Result>(
  compose: () => (...invocation: Arguments) => Result,
): (...invocation: Arguments) => Result {
  let handle: ((...invocation: Arguments) => Result) | undefined;
  return (...invocation) => {
    handle ??= compose();
    return handle(...invocation);
  };
}
