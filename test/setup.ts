// aws-local-stepfunctions uses Promise.withResolvers, which Node 20 lacks.
import '../lambdas/local/promise-with-resolvers.js';
