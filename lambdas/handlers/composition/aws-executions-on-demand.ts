import type { RunExecutions } from '../../core/ports.js';
import type { RunDependencies } from '../../core/run-dependencies.js';

let loaded: Promise<RunExecutions> | undefined;

/**
 * `awsExecutions()` for a handler that calls Step Functions rarely (the inbox and the events
 * stream stop the run of a card that cannot be opened, nothing else): the client and its
 * adapter are imported on the first call, so such a handler does not pay for them at cold start.
 * No static import of either here, or the bundle would evaluate them at init all the same.
 */
export function awsExecutionsOnDemand(): RunDependencies['executions'] {
  const load = (): Promise<RunExecutions> => {
    loaded ??= import('./aws-executions.js').then(({ awsExecutions }) => awsExecutions());
    return loaded;
  };
  return {
    start: async (input) => (await load()).start(input),
    resume: async (taskToken, decision) => (await load()).resume(taskToken, decision),
    stopExecution: async (input) => (await load()).stopExecution(input),
  };
}
