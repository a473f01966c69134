import { type ApiHandlers, createApiHandlers } from './api-handlers.js';
import { awsDependencies } from './aws-dependencies.js';

let api: ApiHandlers['inbox'] | undefined;

/** Lambda entry point of the HTTP API's `inbox` routes. */
export const handler: ApiHandlers['inbox'] = (event) => {
  api ??= createApiHandlers(awsDependencies()).inbox;
  return api(event);
};
