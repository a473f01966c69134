import { describe, expect, it } from 'vitest';
import { configurationSchema } from '../../../lambdas/core/configurations.js';
import type { UserProfile } from '../../../lambdas/core/identity.js';
import {
  applyPolicyFloor,
  DEFAULT_POLICY_FLOOR,
  policyFloorSchema,
  type TurnPolicy,
} from '../../../lambdas/core/policy/policy-floor.js';
import { mayStartWith, startAccessSchema } from '../../../lambdas/core/policy/start-access.js';
import { parseWithUnknownKeys } from '../../../lambdas/core/unknown-keys.js';
import { readEnvironmentPolicyFloor } from '../../../lambdas/handlers/config.js';

const loose: TurnPolicy = { fourEyes: false, requiredApprovals: 1, decisionGate: 'tool' };
const strict: TurnPolicy = { fourEyes: true, requiredApprovals: 3, decisionGate: 'record' };

describe('the policy floor', () => {
  it('raises a loose configuration to every part of the floor', () => {
    // Prepare
    const floor = policyFloorSchema.parse({
      fourEyes: 'always',
      requiredApprovals: 2,
      decisionGate: 'record',
    });

    // Act
    const policy = applyPolicyFloor(loose, floor);

    // Assess
    expect(policy).toEqual({ fourEyes: true, requiredApprovals: 2, decisionGate: 'record' });
  });

  it('never loosens a configuration that is stricter than the floor', () => {
    // Act
    const policy = applyPolicyFloor(strict, DEFAULT_POLICY_FLOOR);

    // Assess
    expect(policy).toEqual(strict);
  });

  it('forces four-eyes only on turns that write with a tool the floor names', () => {
    // Prepare
    const floor = policyFloorSchema.parse({ fourEyesTools: ['update_page_metadata'] });

    // Act
    const named = applyPolicyFloor(loose, floor, ['update_page_metadata']);
    const other = applyPolicyFloor(loose, floor, ['publish_page']);

    // Assess
    expect(named.fourEyes).toBe(true);
    expect(other.fourEyes).toBe(false);
  });

  it('refuses a malformed COUNTERSIGN_POLICY_FLOOR naming the variable and the field', () => {
    // Act
    const notJson = () => readEnvironmentPolicyFloor({ COUNTERSIGN_POLICY_FLOOR: '{always' });
    const misspelt = () => readEnvironmentPolicyFloor({ COUNTERSIGN_POLICY_FLOOR: '{"four_eyes":"always"}' });

    // Assess
    expect(notJson).toThrow(/COUNTERSIGN_POLICY_FLOOR: is not JSON/);
    expect(misspelt).toThrow(/COUNTERSIGN_POLICY_FLOOR/);
    expect(readEnvironmentPolicyFloor({})).toEqual(DEFAULT_POLICY_FLOOR);
  });
});

describe('configuration access lists', () => {
  const user = (fields: Partial<UserProfile>): UserProfile => ({
    userId: 'someone',
    displayName: '',
    grants: ['agent_run'],
    pageAccess: [],
    languageAccess: [],
    toolAccess: [],
    ...fields,
  });

  it.each([
    ['a listed user', { users: ['someone'] }, user({}), true],
    ['a member of a listed group', { groups: ['marketing'] }, user({ groups: ['marketing'] }), true],
    [
      'a holder of a listed grant',
      { grants: ['agent_approve'] },
      user({ grants: ['agent_run', 'agent_approve'] }),
      true,
    ],
    ['an admin, whatever the list', { users: ['other'] }, user({ grants: ['admin'] }), true],
    ['an outsider', { users: ['other'], groups: ['legal'] }, user({ groups: ['marketing'] }), false],
    ['anyone on an empty list but admins', {}, user({}), false],
  ] as const)('answers for %s', (_case, access, principal, expected) => {
    // Act
    const allowed = mayStartWith(principal, startAccessSchema.parse(access));

    // Assess
    expect(allowed).toBe(expected);
  });

  it('lets every agent_run holder start when a configuration has no list', () => {
    // Act & Assess
    expect(mayStartWith(user({}), undefined)).toBe(true);
  });
});

describe('stored records with keys the schema does not know', () => {
  it('names each unknown key by its path and reads the rest without reinterpreting it', () => {
    // Prepare: written before strict schemas; `four_eyes` was never `fourEyes`
    const stored = {
      configurationId: 'legacy',
      label: 'Legacy',
      provider: 'scripted',
      model: 'scripted-v1',
      options: { four_eyes: true, maxTurns: 3 },
      colour: 'blue',
    };

    // Act
    const parsed = parseWithUnknownKeys(configurationSchema, stored);

    // Assess
    expect(parsed.kind).toBe('parsed');
    if (parsed.kind !== 'parsed') return;
    expect(parsed.unknownKeys.sort()).toEqual(['colour', 'options.four_eyes']);
    expect(parsed.value.options.fourEyes).toBe(false);
    expect(parsed.value.options.maxTurns).toBe(3);
  });

  it('still refuses a stored record that is wrong beyond unknown keys', () => {
    // Act
    const parsed = parseWithUnknownKeys(configurationSchema, { configurationId: 'x', extra: 1 });

    // Assess
    expect(parsed.kind).toBe('invalid');
  });
});
