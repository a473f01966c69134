import { config } from 'zod/mini';
import type { $ZodIssue } from 'zod/v4/core';
import english from 'zod/v4/locales/en.js';

/**
 * zod/mini ships without messages (every issue reads "Invalid input"). Loading the English
 * locale once keeps the messages classic zod gave, which reach clients, models and logs.
 * Import this module for its side effect wherever an issue's message is shown.
 */
config(english());

/** What one schema issue says, and the path it is about (`body.options.fourEyes`). */
export interface SchemaProblem {
  readonly path: string;
  readonly message: string;
}

/**
 * One issue as a person reads it: the dotted path from `prefix`, then the message. An unknown key
 * is named by its own path (at whatever depth), with any other unknown keys beside it.
 *
 * @example
 * formatSchemaIssue(error.issues[0], 'body'); // { path: 'body.owner', message: 'unknown field' }
 */
export function formatSchemaIssue(issue: $ZodIssue | undefined, prefix = ''): SchemaProblem {
  const unknownKey = issue?.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
  const path = [prefix, ...(issue?.path ?? []).map(String), ...(unknownKey === undefined ? [] : [unknownKey])]
    .filter(Boolean)
    .join('.');
  const message =
    issue?.code === 'unrecognized_keys'
      ? issue.keys.length > 1
        ? `unknown field (also unknown here: ${issue.keys.slice(1).join(', ')})`
        : 'unknown field'
      : (issue?.message ?? 'invalid');
  return { path, message };
}

/** Every issue of a failed parse on one line: `A: message; B.c: message`. */
export function formatSchemaIssues(issues: readonly $ZodIssue[], prefix = ''): string {
  return issues
    .map((issue) => {
      const problem = formatSchemaIssue(issue, prefix);
      return `${problem.path}: ${problem.message}`;
    })
    .join('; ');
}
