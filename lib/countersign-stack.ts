import { Stack, type StackProps } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { EmailIdentity } from 'aws-cdk-lib/aws-ses';
import type { Construct } from 'constructs';
import { Countersign, type CountersignProps, type CountersignSlackRoute } from './countersign.js';

/** The construct id of the stack in bin/app.ts and in the local mode's synthesis. */
export const COUNTERSIGN_STACK_ID = 'Countersign';

/** Properties of {@link CountersignStack}. */
export interface CountersignStackProps extends StackProps {
  /**
   * Settings of the Countersign construct, except the OpenAI-compatible secret (see below).
   *
   * @default - the construct defaults
   */
  readonly countersign?: Omit<CountersignProps, 'openAiCompatible' | 'mcpServerSecrets' | 'channels'>;
  /**
   * An OpenAI-compatible endpoint whose API key is an existing Secrets Manager secret, by name.
   *
   * @default - none
   */
  readonly openAiCompatible?: { readonly baseUrl: string; readonly apiKeySecretName: string };
  /**
   * Existing Secrets Manager secrets, by name, that the configurations' MCP servers name as
   * `authSecret` (docs/mcp.md).
   *
   * @default - none
   */
  readonly mcpServerSecretNames?: readonly string[];
  /**
   * The Slack channel (docs/approvers.md, "Slack"), its secrets existing Secrets Manager secrets
   * by name.
   *
   * @default - none
   */
  readonly slack?: {
    readonly signingSecretName: string;
    readonly botTokenSecretName: string;
    readonly routes: readonly CountersignSlackRoute[];
  };
  /**
   * The email channel (docs/approvers.md, "Email"): a verified SES identity by name, and the From
   * address.
   *
   * @default - none
   */
  readonly email?: { readonly identityName: string; readonly fromAddress: string };
}

/**
 * The deployable stack of this repository's app (bin/app.ts): one {@link Countersign} construct
 * and the stack outputs. Teams that own a
 * CDK app embed the construct in their own stack instead.
 *
 * @example
 * new CountersignStack(app, COUNTERSIGN_STACK_ID, { countersign: { approvalTimeout: Duration.days(3) } });
 */
export class CountersignStack extends Stack {
  public readonly countersign: Countersign;

  public constructor(scope: Construct, id: string, props: CountersignStackProps = {}) {
    super(scope, id, {
      description: 'countersign: LLM agent runs whose every write waits for a human approval',
      ...props,
    });
    const openAiCompatible =
      props.openAiCompatible === undefined
        ? undefined
        : {
            baseUrl: props.openAiCompatible.baseUrl,
            apiKeySecret: Secret.fromSecretNameV2(
              this,
              'OpenAiApiKey',
              props.openAiCompatible.apiKeySecretName,
            ),
          };
    const mcpServerSecrets = (props.mcpServerSecretNames ?? []).map((name, index) =>
      Secret.fromSecretNameV2(this, `McpServerSecret${index}`, name),
    );
    const slack =
      props.slack === undefined
        ? undefined
        : {
            signingSecret: Secret.fromSecretNameV2(this, 'SlackSigningSecret', props.slack.signingSecretName),
            botToken: Secret.fromSecretNameV2(this, 'SlackBotToken', props.slack.botTokenSecretName),
            routes: props.slack.routes,
          };
    const email =
      props.email === undefined
        ? undefined
        : {
            identity: EmailIdentity.fromEmailIdentityName(this, 'EmailIdentity', props.email.identityName),
            fromAddress: props.email.fromAddress,
          };
    this.countersign = new Countersign(this, 'Countersign', {
      ...props.countersign,
      ...(openAiCompatible === undefined ? {} : { openAiCompatible }),
      ...(mcpServerSecrets.length === 0 ? {} : { mcpServerSecrets }),
      ...(slack === undefined && email === undefined
        ? {}
        : {
            channels: {
              ...(slack === undefined ? {} : { slack }),
              ...(email === undefined ? {} : { email }),
            },
          }),
    });

    // The construct adds no outputs by itself; this app's stack takes the ones sign-in and the
    // smoke test need.
    this.countersign.addOutputs();
  }
}
