import { CfnOutput, Stack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { Countersign } from './countersign.js';

/** The names of the outputs {@link addCountersignOutputs} adds (each id, after the prefix). */
export type CountersignOutputName =
  | 'ApiUrl'
  | 'InboxUrl'
  | 'SignInUrl'
  | 'EventsUrl'
  | 'RunbookUrl'
  | 'IssuerUrl'
  | 'UserPoolId'
  | 'UserPoolClientId'
  | 'StateMachineArn'
  | 'TableName';

/** Where the outputs go and how their ids start. */
export interface CountersignOutputsOptions {
  /**
   * The construct the outputs are added to (their logical ids come from it).
   *
   * @default - the stack the construct is in
   */
  readonly scope?: Construct;
  /**
   * Put before each output id, to keep two deployments in one stack apart (`Approvals` gives
   * `ApprovalsApiUrl`).
   *
   * @default '' (the ids are the names: `ApiUrl`, `EventsUrl`, ...)
   */
  readonly idPrefix?: string;
}

/**
 * The stack outputs a team needs after `cdk deploy`: the API's and the event stream's URLs and
 * the runbook's (the smoke test: `npm run smoke -- --url <ApiUrl>`), the token issuer, and, with
 * the construct's own user pool, the pool and app client sign-in needs (docs/approvers.md). The
 * construct adds none by itself: an app that embeds it may want other names, or none.
 *
 * @example
 * const outputs = countersign.addOutputs({ idPrefix: 'Approvals' });
 * outputs.ApiUrl?.value;
 */
export function addCountersignOutputs(
  countersign: Countersign,
  options: CountersignOutputsOptions = {},
): Partial<Record<CountersignOutputName, CfnOutput>> {
  const scope = options.scope ?? Stack.of(countersign);
  const prefix = options.idPrefix ?? '';
  const outputs: Partial<Record<CountersignOutputName, CfnOutput>> = {};
  const add = (name: CountersignOutputName, value: string, description: string) => {
    outputs[name] = new CfnOutput(scope, `${prefix}${name}`, { value, description });
  };
  add(
    'ApiUrl',
    countersign.apiUrl,
    'The HTTP API: runs, the inbox, decisions (npm run smoke -- --url <ApiUrl>)',
  );
  add(
    'InboxUrl',
    countersign.inboxUrl,
    'The inbox page approvers sign in to; each card is <InboxUrl>inbox/runs/<runId>',
  );
  const { managedLogin } = countersign.auth;
  if (managedLogin !== undefined) {
    add(
      'SignInUrl',
      managedLogin.domain.baseUrl(),
      'The managed login the inbox page signs approvers in with',
    );
  }
  add(
    'EventsUrl',
    countersign.eventsEndpoint.url,
    'GET <EventsUrl>runs/<runId>/events with a bearer token: the run as server-sent events',
  );
  add('RunbookUrl', countersign.runbookUrl, 'The runbook every alarm links to');
  add('IssuerUrl', countersign.auth.issuerUrl, 'The issuer of the tokens the API accepts');
  const { userPool, userPoolClient } = countersign.auth;
  // What an admin needs to create users and an approver to sign in (docs/approvers.md).
  if (userPool !== undefined) add('UserPoolId', userPool.userPoolId, 'The Cognito user pool of the API');
  if (userPoolClient !== undefined) {
    add('UserPoolClientId', userPoolClient.userPoolClientId, 'The app client approvers sign in with');
  }
  add(
    'StateMachineArn',
    countersign.stateMachine.stateMachineArn,
    'The run workflow (one execution per run)',
  );
  add('TableName', countersign.table.tableName, 'The table of runs, cards, decisions and records');
  return outputs;
}
