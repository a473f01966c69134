import { createHash } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/**
 * A 200 with a strong ETag of its body, or 304 without a body when `If-None-Match` names that
 * ETag (RFC 9110, section 13.1.2): a page that polls pays for the reads, not for the transfer or
 * a re-render. Computed over what the client would receive, so any change of the answer shows.
 *
 * @example
 * answerConditionally({ statusCode: 200, body: '…' }, event.headers['if-none-match']);
 */
export function answerConditionally(
  result: APIGatewayProxyStructuredResultV2,
  ifNoneMatch: string | undefined,
): APIGatewayProxyStructuredResultV2 {
  if (result.statusCode !== 200) return result;
  const contentType = String(result.headers?.['content-type'] ?? '');
  // Representations of one resource differ by media type: the ETag names which one it versions.
  const etag = `"${createHash('sha256')
    .update(contentType)
    .update('\n')
    .update(result.body ?? '')
    .digest('base64url')}"`;
  const headers: Record<string, string | number | boolean> = { ...result.headers, etag, vary: 'accept' };
  if (ifNoneMatch !== undefined && matchesEntityTag(ifNoneMatch, etag)) {
    // A 304 carries the validator and no body (and no content type: there is no content).
    const { 'content-type': _contentType, ...notModifiedHeaders } = headers;
    return { statusCode: 304, headers: notModifiedHeaders };
  }
  return { ...result, headers };
}

/** `If-None-Match: *` or a list holding the tag (weak comparison, as the RFC asks for GET). */
function matchesEntityTag(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}
