// aws-local-stepfunctions uses Promise.withResolvers, which Node 20 lacks.
import '../lambdas/local/promise-with-resolvers.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
