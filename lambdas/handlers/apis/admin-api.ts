import { createHttpApi, type HttpApiDependencies, type HttpLambdaHandler } from '../http/http-api.js';
import { type AdminDependencies, assertAdmin, createAdminRoutes } from '../routes/admin-routes.js';

/**
 * The `admin` API Lambda: configurations, tasks, users, pages and skills. The `admin` grant is
 * checked before any route reads its input (a non-admin learns nothing from a 400).
 */
export function createAdminApi(dependencies: AdminDependencies & HttpApiDependencies): HttpLambdaHandler {
  return createHttpApi('api-admin', createAdminRoutes(dependencies), dependencies, {
    authorize: assertAdmin,
  });
}
