/**
 * The absolute address of a card under the inbox page's URL (which ends in `/`): what a Slack
 * message and a mail link to. The page opens it after sign-in; nothing is decided by following it.
 * Until the page has a card's own route, the address is the inbox with the run id as its fragment.
 *
 * @example
 * cardPageUrl('https://abc.execute-api.eu-west-1.amazonaws.com/', '4f0c…');
 * // 'https://abc.execute-api.eu-west-1.amazonaws.com/#run-4f0c…'
 */
export function cardPageUrl(inboxUrl: string, runId: string): string {
  return new URL(`#run-${encodeURIComponent(runId)}`, inboxUrl).href;
}
