import { type UserProfile, userProfileSchema } from '../../lambdas/core/identity.js';
import type { ToolExecutionContext } from '../../lambdas/core/tools/tool.js';
import { InMemoryPageStore, type PageInput } from '../support/in-memory-page-store.js';

/** A user the page tools authorise against; page and language access default to nothing. */
export function createUser(overrides: Partial<UserProfile> & { userId: string }): UserProfile {
  return userProfileSchema.parse({ grants: ['agent_run'], ...overrides });
}

export const editor = createUser({ userId: 'editor', pageAccess: ['12', '13'], languageAccess: ['en'] });
export const admin = createUser({ userId: 'admin', grants: ['admin'] });

export const samplePages: PageInput[] = [
  {
    pageId: '12',
    language: 'en',
    slug: '/offers',
    title: 'Offers',
    description: 'Winter sale on all coats',
    keywords: 'coats, winter',
    body: 'Our winter collection is on sale. Spring arrives soon.',
  },
  { pageId: '13', language: 'de', slug: '/angebote', title: 'Angebote', description: 'Winterschlussverkauf' },
  {
    pageId: '14',
    language: 'en',
    slug: '/secret',
    title: 'Spring roadmap',
    description: 'Internal spring plans',
  },
];

/** A tool's context at execution: the acting user, the pages, and one call's idempotency key. */
export function createToolContext(
  actingUser: UserProfile,
  pages: readonly PageInput[] = samplePages,
): ToolExecutionContext & { pages: InMemoryPageStore } {
  return { actingUser, runId: 'run-1', pages: new InMemoryPageStore(pages), idempotencyKey: 'run-1/1/0' };
}
