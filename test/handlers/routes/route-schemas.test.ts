import { describe, expect, it } from 'vitest';
import { OPERATIONS, type OperationContract } from '../../../lambdas/contract/operations.js';
import { type OperationId, ROUTES } from '../../../lambdas/contract/routes.js';
import { slackInteractionFormSchema } from '../../../lambdas/core/channels/receive-slack-interaction.js';
import type { AnyRouteImplementation } from '../../../lambdas/handlers/http/http-api.js';
import { createAdminRoutes } from '../../../lambdas/handlers/routes/admin-routes.js';
import { createCallRoutes } from '../../../lambdas/handlers/routes/call-routes.js';
import { createDecisionRoutes } from '../../../lambdas/handlers/routes/decision-routes.js';
import { createExternalRoutes } from '../../../lambdas/handlers/routes/external-routes.js';
import { createGenerateRoutes } from '../../../lambdas/handlers/routes/generate-routes.js';
import { createInboxRoutes } from '../../../lambdas/handlers/routes/inbox-routes.js';
import { createOpenApiRoutes } from '../../../lambdas/handlers/routes/openapi-routes.js';
import { createRunbookRoutes } from '../../../lambdas/handlers/routes/runbook-routes.js';
import { createRunsRoutes } from '../../../lambdas/handlers/routes/runs-routes.js';

// The route factories only keep their dependencies; none is used until a request arrives.
const unused = {} as never;

/** Every route implementation of the API functions, by operationId. */
const IMPLEMENTATIONS: Partial<Record<OperationId, AnyRouteImplementation>> = {
  ...createRunsRoutes(unused),
  ...createDecisionRoutes(unused),
  ...createInboxRoutes(unused),
  ...createCallRoutes(unused),
  ...createOpenApiRoutes(),
  ...createRunbookRoutes(),
  ...createGenerateRoutes(unused),
  ...createAdminRoutes(unused),
  ...createExternalRoutes(unused),
};

describe('the handlers validate with the schemas the OpenAPI document describes', () => {
  it.each(
    // The event stream and the Slack route parse their own input (a stream, a signed form).
    ROUTES.filter((route) => route.function !== 'api-run-events' && route.auth !== 'slack-signature').map(
      (route) => [route.operationId] as const,
    ),
  )('%s: the same body and query schema objects as its contract', (operationId) => {
    // Prepare
    const contract: OperationContract = OPERATIONS[operationId];

    // Act
    const implementation = IMPLEMENTATIONS[operationId];

    // Assess
    expect(implementation, operationId).toBeDefined();
    expect(implementation?.body).toBe(contract.body);
    expect(implementation?.query).toBe(contract.query);
    expect(implementation?.bodyOptional ?? false).toBe(contract.bodyOptional ?? false);
  });

  it('reads a Slack interaction’s form with the schema its contract describes', () => {
    expect(OPERATIONS.receiveSlackInteraction.body).toBe(slackInteractionFormSchema);
    expect(OPERATIONS.receiveSlackInteraction.bodyMediaType).toBe('application/x-www-form-urlencoded');
  });
});
