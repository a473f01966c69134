import { type ApiHandlers, createApiHandlers } from './api-handlers.js';
import { awsDependencies } from './aws-dependencies.js';

let api: ApiHandlers['runs'] | undefined;

/** Lambda entry point of the HTTP API's `runs` routes. */
export const handler: ApiHandlers['runs'] = (event) => {
  api ??= createApiHandlers(awsDependencies()).runs;
  return api(event);
};
