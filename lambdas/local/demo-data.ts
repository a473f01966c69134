import type { Configuration, ConfigurationRepository, Task } from '../core/configurations.js';
import type { UserProfile } from '../core/identity.js';
import type { Page, PageStore } from '../core/pages.js';
import type { UserDirectory } from '../core/ports.js';
import { DEMO_MACHINE_CLIENT_ID } from './local-machine-clients.js';

/** The configuration the demo agent that runs elsewhere submits its turns under (docs/external-agents.md). */
export const DEMO_EXTERNAL_CONFIGURATION_ID = 'demo-external';
/** Every tool of that configuration's agents: what the demo approvers' tool access names. */
const DEMO_EXTERNAL_TOOLS = `${DEMO_EXTERNAL_CONFIGURATION_ID}/*`;

/** What an approver of the demo pages may do: two people hold it, so a k-of-n turn can be released. */
const PAGE_APPROVER_RIGHTS = {
  grants: ['agent_approve'],
  pageAccess: ['12', '14', '20'],
  languageAccess: '*',
  toolAccess: ['update_page_metadata', DEMO_EXTERNAL_TOOLS],
} satisfies Partial<UserProfile>;

/**
 * The demo users of local mode, one per kind of person the product serves: an editor who
 * starts runs, two approvers with rights on the demo pages (a two-approver configuration needs
 * both), an operations approver without page rights (who sees cards but not what a write would
 * replace, and under the record gate may reject but not approve), and an admin.
 */
export const DEMO_USERS: readonly UserProfile[] = [
  {
    userId: 'editor',
    displayName: 'Eda Editor',
    groups: ['marketing'],
    grants: ['agent_run'],
    pageAccess: ['12', '14'],
    languageAccess: ['en', 'de'],
    toolAccess: [],
  },
  { userId: 'approver', displayName: 'Abe Approver', ...PAGE_APPROVER_RIGHTS },
  { userId: 'reviewer', displayName: 'Rhea Reviewer', ...PAGE_APPROVER_RIGHTS },
  {
    userId: 'ops-approver',
    displayName: 'Ola Operations',
    grants: ['agent_approve'],
    pageAccess: [],
    languageAccess: [],
    toolAccess: ['update_page_metadata'],
  },
  {
    userId: 'admin',
    displayName: 'Ada Admin',
    grants: ['admin'],
    pageAccess: '*',
    languageAccess: '*',
    toolAccess: '*',
  },
];

/**
 * The user record of the demo agent that runs elsewhere, a machine client: it may submit turns
 * (`agent_run`), and nothing else. Its token comes from the local token endpoint, not the banner's
 * list of people.
 */
export const DEMO_MACHINE_USERS: readonly UserProfile[] = [
  {
    userId: DEMO_MACHINE_CLIENT_ID,
    displayName: 'Demo agent (runs elsewhere)',
    grants: ['agent_run'],
    pageAccess: [],
    languageAccess: [],
    toolAccess: [],
  },
];

const page = (fields: Partial<Page> & Pick<Page, 'pageId' | 'language' | 'title'>): Page => ({
  slug: '',
  body: '',
  description: '',
  keywords: '',
  author: '',
  ogTitle: '',
  ogDescription: '',
  updatedAt: '2026-01-01T00:00:00.000Z',
  updatedBy: 'seed',
  ...fields,
});

export const DEMO_PAGES: readonly Page[] = [
  page({
    pageId: '12',
    language: 'en',
    slug: '/spring',
    title: 'Spring campaign',
    description: 'Hand-written by the marketing team: our spring range, in stores from March.',
    keywords: 'spring, campaign, garden',
    body: 'Our spring range arrives in March: seeds, tools and furniture for the garden.',
  }),
  page({
    pageId: '14',
    language: 'de',
    slug: '/impressum',
    title: 'Impressum',
    description: 'Angaben gemäß § 5 TMG.',
    body: 'Verantwortlich für den Inhalt: Beispiel GmbH.',
  }),
  page({
    pageId: '20',
    language: 'en',
    slug: '/internal/pricing',
    title: 'Internal pricing notes',
    description: 'Margins per product line; not for the public site.',
    body: 'Confidential.',
  }),
];

const ALL_PAGE_TOOLS = ['get_page', 'list_pages', 'search_pages', 'update_page_metadata'];

/** A scripted demo configuration: the shared settings, with the label, policy and access that set it apart. */
const scriptedConfiguration = (
  fields: Pick<Configuration, 'configurationId' | 'label'> &
    Partial<Pick<Configuration, 'systemPrompt' | 'startAccess'>> & {
      policy: Pick<
        Configuration['options'],
        'fourEyes' | 'requiredApprovals' | 'decisionGate' | 'revealRejectionReason'
      >;
    },
): Configuration => ({
  configurationId: fields.configurationId,
  label: fields.label,
  provider: 'scripted',
  model: 'scripted-v1',
  systemPrompt: fields.systemPrompt ?? 'You maintain the metadata of the website pages.',
  allowedTools: ALL_PAGE_TOOLS,
  options: { maxTurns: 12, turnsPerExecution: 40, maxTokens: 2048, temperature: 0, ...fields.policy },
  skillIds: [],
  ...(fields.startAccess ? { startAccess: fields.startAccess } : {}),
});

export const DEMO_CONFIGURATIONS: readonly Configuration[] = [
  scriptedConfiguration({
    configurationId: 'demo-scripted',
    label: 'Page assistant (scripted model)',
    systemPrompt: 'You maintain the metadata of the website pages. Use the tools; never guess page contents.',
    policy: { fourEyes: false, requiredApprovals: 1, decisionGate: 'tool', revealRejectionReason: true },
  }),
  scriptedConfiguration({
    configurationId: 'demo-four-eyes',
    label: 'Page assistant, four-eyes (scripted model)',
    policy: { fourEyes: true, requiredApprovals: 1, decisionGate: 'tool', revealRejectionReason: false },
  }),
  // k-of-n: two distinct approvers, neither of them the run's owner, release a write.
  scriptedConfiguration({
    configurationId: 'demo-two-approvers',
    label: 'Page assistant, two approvers (scripted model)',
    policy: { fourEyes: true, requiredApprovals: 2, decisionGate: 'tool', revealRejectionReason: false },
  }),
  // The record gate: only approvers who may see the page a write touches may release it
  // (ops-approver may still reject). Only the marketing group may start runs with it.
  scriptedConfiguration({
    configurationId: 'demo-record-gate',
    label: 'Page assistant, record-level gate (scripted model)',
    policy: { fourEyes: false, requiredApprovals: 1, decisionGate: 'record', revealRejectionReason: true },
    startAccess: { grants: [], groups: ['marketing'], users: [] },
  }),
  // Agents that run elsewhere submit their turns under this one's policy; only the demo agent may.
  scriptedConfiguration({
    configurationId: DEMO_EXTERNAL_CONFIGURATION_ID,
    label: 'Agent that runs elsewhere (demo)',
    policy: { fourEyes: false, requiredApprovals: 1, decisionGate: 'tool', revealRejectionReason: true },
    startAccess: { grants: [], groups: [], users: [DEMO_MACHINE_CLIENT_ID] },
  }),
];

export const DEMO_TASKS: readonly Task[] = [
  {
    taskId: 'page-metadata',
    label: 'Update page metadata',
    configurationId: 'demo-scripted',
    promptTemplate: '{{input}}',
    skillIds: [],
  },
];

/** Writes the demo records; existing pages are left as they are, so a restart loses no edit. */
export async function seedDemoData(stores: {
  users: UserDirectory;
  pages: PageStore;
  configurations: ConfigurationRepository;
}): Promise<void> {
  for (const user of [...DEMO_USERS, ...DEMO_MACHINE_USERS]) await stores.users.putUser(user);
  for (const configuration of DEMO_CONFIGURATIONS)
    await stores.configurations.putConfiguration(configuration);
  for (const task of DEMO_TASKS) await stores.configurations.putTask(task);
  const existing = await stores.pages.getPages(DEMO_PAGES.map((demoPage) => demoPage.pageId));
  for (const demoPage of DEMO_PAGES) {
    if (!existing.has(demoPage.pageId)) await stores.pages.putPage(demoPage);
  }
}
