import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { Countersign, type CountersignProps } from '../../lib/countersign.js';
import {
  IDENTITY_GROUP_GRANTS_VARIABLE,
  resolveIdentityGroupGrants,
} from '../../lib/identity-group-grants.js';

const EXTERNAL = { issuerUrl: 'https://login.example.com/realms/team', audience: ['countersign'] };
const PRINCIPAL_READERS = [
  'api-runs',
  'api-inbox',
  'api-decision',
  'api-admin',
  'api-generate',
  'api-run-events',
] as const;

/** The mapping each function is deployed with, by handler name (undefined: the variable is not set). */
function mappingsOf(props: CountersignProps): Record<string, unknown> {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'GroupsTest');
  const countersign = new Countersign(stack, 'Countersign', props);
  const template = Template.fromStack(stack);
  const functions = template.findResources('AWS::Lambda::Function');
  const result: Record<string, unknown> = {};
  for (const [name, handler] of Object.entries(countersign.functions)) {
    const logicalId = stack.getLogicalId(handler.node.defaultChild as never);
    const variables = (functions[logicalId]?.Properties?.Environment?.Variables ?? {}) as Record<
      string,
      string
    >;
    const value = variables[IDENTITY_GROUP_GRANTS_VARIABLE];
    result[name] = value === undefined ? undefined : JSON.parse(value);
  }
  return result;
}

describe('identityGroupGrants', () => {
  it("maps the construct's own user pool groups to the grants they name, for the functions that read a principal", () => {
    // Act
    const mappings = mappingsOf({});

    // Assess
    for (const name of PRINCIPAL_READERS) {
      expect(mappings[name]).toEqual({
        agent_run: ['agent_run'],
        agent_approve: ['agent_approve'],
        admin: ['admin'],
      });
    }
    expect(mappings['model-turn']).toBeUndefined();
  });

  it('maps no group of an external identity provider unless told: its "admin" group is no countersign admin', () => {
    const mappings = mappingsOf({ externalIdentityProvider: EXTERNAL });
    for (const name of PRINCIPAL_READERS) expect(mappings[name]).toEqual({});
  });

  it('deploys the mapping it is given', () => {
    const mappings = mappingsOf({
      externalIdentityProvider: EXTERNAL,
      identityGroupGrants: { 'countersign-approvers': ['agent_approve'], 'platform-admins': ['admin'] },
    });
    expect(mappings['api-decision']).toEqual({
      'countersign-approvers': ['agent_approve'],
      'platform-admins': ['admin'],
    });
  });

  it.each([
    [
      { ops: ['superuser'] },
      /identityGroupGrants\["ops"\] has \["superuser"\]; each group maps to a list of grants/,
    ],
    [{ ops: 'admin' }, /identityGroupGrants\["ops"\] has \["admin"\]/],
    [{ '': ['admin'] }, /identityGroupGrants has the group name ""/],
  ])('refuses %o, quoting the value', (identityGroupGrants, message) => {
    expect(() =>
      resolveIdentityGroupGrants({
        scope: new Stack(new App(), 'Grants'),
        identityGroupGrants: identityGroupGrants as never,
        usesExternalIdentityProvider: true,
      }),
    ).toThrow(message);
  });
});
