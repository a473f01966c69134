import { type ApiHandlers, createApiHandlers } from './api-handlers.js';
import { awsDependencies } from './aws-dependencies.js';

let api: ApiHandlers['admin'] | undefined;

/** Lambda entry point of the HTTP API's `admin` routes. */
export const handler: ApiHandlers['admin'] = (event) => {
  api ??= createApiHandlers(awsDependencies()).admin;
  return api(event);
};
