import type {
  Message,
  ModelProvider,
  ModelReply,
  ModelRequest,
  TextBlock,
  ToolCallBlock,
  ToolResultBlock,
} from '../../core/model.js';
import { PAGE_METADATA_FIELDS, type PageMetadataField } from '../../core/pages.js';

const RESULT_EXCERPT_MAX_CHARACTERS = 1500;

/**
 * A deterministic model for local mode and tests: no network, no randomness, the same reply
 * for the same conversation. It understands a small English grammar about pages.
 *
 * **Which text it reads.** The instruction is the LAST user message that carries text and no
 * tool results (a message that carries both is commentary on the results, such as a
 * rejection reason). Tool results are the `tool_result` blocks of the messages after it.
 *
 * **When there are tool results** it answers with a final text, one line per result:
 * `Done: <tool> succeeded.` followed by the result text, or
 * `Not applied: <tool> failed with "<the tool's error text>"` for a refusal, a denial or a failure.
 * It never proposes a second round of calls, so a scripted run always ends.
 *
 * **Otherwise** it matches the instruction (case-insensitive), first rule wins:
 *
 * | instruction | proposes |
 * |---|---|
 * | `set\|change\|update` + one or more clauses `[set] [the] <field> [of page <id>] to <quoted>` joined by `and` or `,` | one `update_page_metadata` call per page with every field of its clauses, in order |
 * | `search\|find [the] pages for\|about\|mentioning\|containing <text or quoted>` | `search_pages { query }` |
 * | `list [all] [the] pages`, `show [me] [all] [the] pages`, `which pages` | `list_pages {}` |
 * | `what is on\|what's on\|show [me]\|get\|open\|read\|describe [the] page <id>` | `get_page { pageId }` |
 * | `call <tool> with <JSON object>` (the whole instruction) | that call, as given: how a team tries its own tools locally |
 * | anything else | a final text saying what it understands |
 *
 * - `<field>`: `title`, `description`, `keywords`, `author`, `og title`, `og description`
 *   (also `ogTitle`, `og:title`, `og_title`, ...).
 * - `<id>`: letters, digits, `_` and `-`, bare or in single or double quotes (`page 12`, `page '12'`).
 * - `<quoted>`: `'...'` or `"..."`; a value containing `'` is written in double quotes.
 * - A clause without `of page <id>` uses the page of the clause before it, or else the first
 *   `page <id>` anywhere in the instruction ("On page 12, set the title to 'A'").
 *
 * Every pattern it matches with is linear in the instruction's length, which the API bounds
 * (a run input, a completion text), so no instruction can stall the process.
 *
 * It only proposes tools offered in the request's `tools`; when the tool it needs is not
 * offered, it says so in a final text. Call ids are `call-<turn>-<index>`, where `<turn>` is
 * the number of assistant messages so far plus one and `<index>` the position in the reply.
 *
 * @example
 * await new ScriptedModel().converse({
 *   model: 'scripted', tools: offeredTools,
 *   messages: [{ role: 'user', content: [{ type: 'text', text: "Set the description of page 12 to 'Spring sale'" }] }],
 * });
 * // { stopReason: 'tool_use', content: [{ type: 'tool_call', callId: 'call-1-0',
 * //   name: 'update_page_metadata', arguments: { pageId: '12', description: 'Spring sale' } }] }
 */
export class ScriptedModel implements ModelProvider {
  public readonly name = 'scripted';

  public async converse(request: ModelRequest): Promise<ModelReply> {
    const instructionIndex = findInstructionIndex(request.messages);
    const later = request.messages.slice(instructionIndex + 1);
    const results = later.flatMap((message) =>
      message.role === 'user'
        ? message.content.filter((block): block is ToolResultBlock => block.type === 'tool_result')
        : [],
    );
    const reply =
      results.length > 0
        ? finalText(summariseResults(results, later))
        : replyToInstruction(instructionText(request.messages[instructionIndex]), request);
    return { ...reply, usage: estimateUsage(request, reply.content), attempts: { total: 1, throttled: 0 } };
  }
}

type Proposal = { tool: string; arguments: Record<string, unknown> };

function replyToInstruction(instruction: string, request: ModelRequest): Omit<ModelReply, 'usage'> {
  const proposals = parseInstruction(instruction);
  if (proposals === undefined) return finalText(HELP_TEXT);
  const offered = new Set(request.tools.map((tool) => tool.name));
  const missing = proposals.find((proposal) => !offered.has(proposal.tool));
  if (missing !== undefined) {
    return finalText(`I cannot do that here: the tool "${missing.tool}" is not offered to me in this run.`);
  }
  const turn = request.messages.filter((message) => message.role === 'assistant').length + 1;
  const calls: ToolCallBlock[] = proposals.map((proposal, index) => ({
    type: 'tool_call',
    callId: `call-${turn}-${index}`,
    name: proposal.tool,
    arguments: proposal.arguments,
  }));
  return { content: calls, stopReason: 'tool_use' };
}

const HELP_TEXT =
  "I can set page metadata (for example: Set the description of page 12 to 'Spring sale'), " +
  'show a page (What is on page 12?), list the pages, or search them (Search pages for spring). ' +
  'I did not recognise one of those in your message.';

/** The proposals for an instruction, or `undefined` when it is not in the grammar. */
function parseInstruction(instruction: string): Proposal[] | undefined {
  const direct = parseDirectCall(instruction);
  if (direct !== undefined) return [direct];
  const updates = parseSetClauses(instruction);
  if (updates !== undefined) return updates;
  const query = parseSearchQuery(instruction);
  if (query !== undefined) return [{ tool: 'search_pages', arguments: { query } }];
  if (LIST_PATTERN.test(instruction)) return [{ tool: 'list_pages', arguments: {} }];
  const get = GET_PATTERN.exec(instruction);
  if (get !== null) return [{ tool: 'get_page', arguments: { pageId: get[1] ?? get[2] ?? get[3] } }];
  return undefined;
}

const DIRECT_CALL_PATTERN = /^\s*call\s+([a-zA-Z][a-zA-Z0-9_-]{0,63})\s+with\s+(\{[\s\S]*\})\s*$/i;

/** `call <tool> with {...}`: any offered tool, so a team's own tools run with the scripted model. */
function parseDirectCall(instruction: string): Proposal | undefined {
  const match = DIRECT_CALL_PATTERN.exec(instruction);
  if (match === null || match[1] === undefined || match[2] === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(match[2]);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
    return { tool: match[1], arguments: parsed as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

const PAGE_ID = `(?:'([A-Za-z0-9_-]+)'|"([A-Za-z0-9_-]+)"|([A-Za-z0-9_-]+))`;
const SET_VERB_PATTERN = /\b(?:set|change|update)\b/i;
const SET_CLAUSE_PATTERN = new RegExp(
  String.raw`(?:\b(?:set|change|update)\s+)?(?:the\s+)?\b(og[\s:_-]?title|og[\s:_-]?description|title|description|keywords|author)\b` +
    String.raw`(?:\s+of\s+page\s+${PAGE_ID})?\s+to\s+(?:'([^']*)'|"([^"]*)")`,
  'gi',
);
const ANY_PAGE_PATTERN = new RegExp(String.raw`\bpage\s+${PAGE_ID}`, 'i');
const SEARCH_PATTERN =
  /\b(?:search|find)\s+(?:(?:the|all)\s+)?pages?\s+(?:for|about|mentioning|containing)\s/i;
const LIST_PATTERN = /\b(?:(?:list|show)\s+(?:me\s+)?(?:all\s+)?(?:the\s+)?pages|which\s+pages)\b/i;
const GET_PATTERN = new RegExp(
  String.raw`\b(?:what(?:'s|\s+is)\s+on|show(?:\s+me)?|get|open|read|describe)\s+(?:the\s+)?page\s+${PAGE_ID}`,
  'i',
);

/** One `update_page_metadata` proposal per page named, in first-mention order, or `undefined`. */
function parseSetClauses(instruction: string): Proposal[] | undefined {
  if (!SET_VERB_PATTERN.test(instruction)) return undefined;
  const clauses = [...instruction.matchAll(SET_CLAUSE_PATTERN)];
  if (clauses.length === 0) return undefined;
  const anyPage = ANY_PAGE_PATTERN.exec(instruction);
  let currentPage = anyPage === null ? undefined : (anyPage[1] ?? anyPage[2] ?? anyPage[3]);
  const byPage = new Map<string, Record<string, unknown>>();
  for (const clause of clauses) {
    currentPage = clause[2] ?? clause[3] ?? clause[4] ?? currentPage;
    if (currentPage === undefined) return undefined;
    const field = toMetadataField(clause[1] ?? '');
    if (field === undefined) return undefined;
    const fields = byPage.get(currentPage) ?? { pageId: currentPage };
    fields[field] = clause[5] ?? clause[6] ?? '';
    byPage.set(currentPage, fields);
  }
  return [...byPage.values()].map((fields) => ({ tool: 'update_page_metadata', arguments: fields }));
}

/**
 * The query after `search pages for`: the rest of the instruction without its closing
 * punctuation, unquoted when it is one quoted string. Cut with string operations, not a
 * pattern: a lazy group before optional trailing runs backtracks cubically (issue #20).
 */
function parseSearchQuery(instruction: string): string | undefined {
  const prefix = SEARCH_PATTERN.exec(instruction);
  if (prefix === null) return undefined;
  let end = instruction.length;
  while (end > 0 && /[\s?.!]/.test(instruction.charAt(end - 1))) end -= 1;
  const rest = instruction.slice(prefix.index + prefix[0].length, end).trim();
  const quote = rest.charAt(0);
  const inner = rest.slice(1, -1);
  const quoted =
    (quote === "'" || quote === '"') && rest.length >= 2 && rest.endsWith(quote) && !inner.includes(quote);
  const query = quoted ? inner.trim() : rest;
  return query === '' ? undefined : query;
}

function toMetadataField(spoken: string): PageMetadataField | undefined {
  const compact = spoken.toLowerCase().replace(/[\s:_-]/g, '');
  return PAGE_METADATA_FIELDS.find((field) => field.toLowerCase() === compact);
}

/** Index of the last user message with text and no tool results; -1 when there is none. */
function findInstructionIndex(messages: readonly Message[]): number {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.role !== 'user') continue;
    const hasResults = message.content.some((block) => block.type === 'tool_result');
    const hasText = message.content.some((block) => block.type === 'text' && block.text.trim() !== '');
    if (hasText && !hasResults) return index;
  }
  return -1;
}

function instructionText(message: Message | undefined): string {
  if (message === undefined) return '';
  return message.content
    .filter((block): block is TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

function summariseResults(results: readonly ToolResultBlock[], later: readonly Message[]): string {
  const toolNames = new Map<string, string>();
  for (const message of later) {
    if (message.role !== 'assistant') continue;
    for (const block of message.content)
      if (block.type === 'tool_call') toolNames.set(block.callId, block.name);
  }
  return results
    .map((result) => {
      const tool = toolNames.get(result.callId) ?? 'the tool';
      const text = excerpt(result.content.trim());
      if (result.isError) return `Not applied: ${tool} failed with "${text}"`;
      return text === '' ? `Done: ${tool} succeeded.` : `Done: ${tool} succeeded.\n${text}`;
    })
    .join('\n');
}

function excerpt(text: string): string {
  const characters = Array.from(text);
  if (characters.length <= RESULT_EXCERPT_MAX_CHARACTERS) return text;
  return `${characters.slice(0, RESULT_EXCERPT_MAX_CHARACTERS - 1).join('')}…`;
}

function finalText(text: string): Omit<ModelReply, 'usage'> {
  return { content: [{ type: 'text', text }], stopReason: 'end_turn' };
}

/** A stable stand-in for token usage (about four characters a token), so metrics have numbers. */
function estimateUsage(request: ModelRequest, content: ReadonlyArray<TextBlock | ToolCallBlock>) {
  const inputCharacters = (request.system ?? '').length + JSON.stringify(request.messages).length;
  const outputCharacters = JSON.stringify(content).length;
  return { inputTokens: Math.ceil(inputCharacters / 4), outputTokens: Math.ceil(outputCharacters / 4) };
}
