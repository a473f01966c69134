import { routeOf } from './routes.js';

const CARD_PAGE_PATH = routeOf('getCardPage').path;

/**
 * A card's own address on the inbox page (the manifest's `getCardPage` route), relative to the
 * page: what the page links to, and what a notification carries (absolute, with `cardPageUrl`).
 *
 * @example
 * cardPagePath('4f0c…'); // '/inbox/runs/4f0c…'
 */
export function cardPagePath(runId: string): string {
  return CARD_PAGE_PATH.replace('{id}', encodeURIComponent(runId));
}

/**
 * The absolute address of a card, under the inbox page's URL (which ends in `/`; the page may sit
 * under a path of a custom domain).
 *
 * @example
 * cardPageUrl('https://abc.execute-api.eu-west-1.amazonaws.com/', '4f0c…');
 * // 'https://abc.execute-api.eu-west-1.amazonaws.com/inbox/runs/4f0c…'
 */
export function cardPageUrl(inboxUrl: string, runId: string): string {
  return new URL(cardPagePath(runId).slice(1), inboxUrl).href;
}
