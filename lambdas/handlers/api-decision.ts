import { type ApiHandlers, createApiHandlers } from './api-handlers.js';
import { awsDependencies } from './aws-dependencies.js';

let api: ApiHandlers['decision'] | undefined;

/** Lambda entry point of the HTTP API's `decision` routes. */
export const handler: ApiHandlers['decision'] = (event) => {
  api ??= createApiHandlers(awsDependencies()).decision;
  return api(event);
};
