// The SDK prints a notice when the Node it runs on nears its end of support: noise in test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
