import type * as zc from 'zod/v4/core';
import { createExternalToolStandIn } from '../external-runs/external-tools.js';
import type { UserProfile } from '../identity.js';
import type { PageStore } from '../pages.js';

/** What a tool does to the world. A write always requires approval. */
export type ToolEffect = 'read' | 'write';

/** What a tool's `execute` returns: text for the model, flagged when it is a refusal or failure. */
export interface ToolOutcome {
  content: string;
  isError: boolean;
  /**
   * The write was refused because its record no longer matches `context.precondition` (a
   * conditional write lost its condition): nothing was applied, and the run asks again on a
   * fresh card instead of telling the model. Only for a tool with `readPrecondition`.
   */
  recordChanged?: boolean;
}

/**
 * What a tool may use while it runs. `actingUser` is the run owner's profile: tools
 * authorise against it and never against an ambient identity.
 */
export interface ToolContext {
  actingUser: UserProfile;
  runId: string;
  pages: PageStore;
  /**
   * At execution, for a tool with `readPrecondition`: the target's version sealed with the card
   * the approver saw. The loop has compared it before the call; a tool whose store can write
   * conditionally compares it in the write itself, and answers `recordChanged` when it differs.
   */
  precondition?: string;
}

/**
 * What `execute` gets: the tool context and the call's idempotency key.
 *
 * `idempotencyKey` names this call of this run and turn (`<runId>/<turn>/<call index>`, at most
 * 200 characters, opaque): the same for every attempt to run the call, different for any other
 * call. A tool whose backend can refuse a key it already applied (a conditional write, an
 * idempotency header) passes it on and sets `idempotent: true`.
 */
export interface ToolExecutionContext extends ToolContext {
  idempotencyKey: string;
}

/**
 * A tool of the loop. No base class: a plain object with a zod input schema (its JSON
 * schema is what the model sees), an effect, and `execute`. The schema may be written with
 * classic zod or zod/mini: the loop only uses the shared core (`safeParse`, `toJSONSchema`).
 * The built-in tools use zod/mini, which keeps the Lambda bundles small.
 *
 * Opt-in preview contract (docs/previews.md): `preview` returns human-readable lines that say what
 * the call would do and what it would replace, under the acting user; `mayViewerReadPreview`
 * answers whether a given viewer may be shown them. Tools without them render no preview.
 *
 * Opt-in precondition contract (for RELATIVE writes: an append, an increment): `readPrecondition`
 * returns the version of the call's target as the acting user reads it (a content hash or an
 * `updatedAt`), the same value for a missing and a forbidden target. It is read when the run
 * pauses, before the preview, and sealed with the card; at execution it is read again, and
 * when it differs the turn's writes are not applied and the run pauses on a fresh card. Absolute
 * writes leave it out: their preview is a snapshot, not a precondition (docs/previews.md).
 *
 * @example
 * const echo = defineTool({
 *   name: 'echo', description: 'Repeats its input.', effect: 'read',
 *   input: z.object({ text: z.string() }),
 *   execute: async ({ text }) => ({ content: text, isError: false }),
 * });
 */
export interface Tool<Arguments = unknown> {
  readonly name: string;
  readonly description: string;
  readonly input: zc.$ZodType<Arguments>;
  /** The JSON schema the model sees, when it is not derived from `input` (an MCP server's own). */
  readonly inputJsonSchema?: Record<string, unknown>;
  readonly effect: ToolEffect;
  /** Ask a human even for a read. Ignored for writes, which always ask. @default false */
  readonly requiresApproval?: boolean;
  /**
   * An approver may edit a call's arguments before approving it (docs/approvers.md, "Approve with
   * edits"): the edit is checked against `input`, re-previewed and approved as a new proposal.
   * Leave it off for a tool whose arguments a person should not rewrite. @default false
   */
  readonly editable?: boolean;
  /**
   * Tools whose calls in the same turn must get the same decision as this tool's calls: all
   * approved or all rejected, never some of each (a per-call decision that splits them is a 400).
   * Name this tool itself to tie its own calls of a turn together. @default - decided one by one
   */
  readonly decidedWith?: readonly string[];
  /**
   * Running the call twice with the same `context.idempotencyKey` applies it once (the tool's
   * backend refuses a key it already applied). An approved call whose earlier attempt started
   * and never reported back is then run again with its key; without it, the call is not run
   * again and its result says its outcome is unknown (at most once). @default false
   */
  readonly idempotent?: boolean;
  /**
   * Runs the call. Throw `TransientToolError` when it failed for now and applied nothing (or the
   * tool is `idempotent`): the workflow runs it again with backoff, a few times, before the call
   * ends "not applied". Any other throw is a permanent failure, recorded as it is.
   */
  execute(args: Arguments, context: ToolExecutionContext): Promise<ToolOutcome>;
  /** The preview's lines; or the lines and its text changes, which the card shows as a word-level diff. */
  preview?(args: Arguments, actingUser: UserProfile, context: ToolContext): Promise<string[] | WritePreview>;
  mayViewerReadPreview?(args: Arguments, viewer: UserProfile, context: ToolContext): Promise<boolean>;
  readPrecondition?(args: Arguments, actingUser: UserProfile, context: ToolContext): Promise<string>;
}

/**
 * A preview with the whole text of what changes: each field's value now and as the write would
 * set it. Its lines still say what changes (bounded, 120-character excerpts); the card draws a
 * word-level diff of the changes, so a long text shows where it changes (bounded too).
 */
export interface WritePreview {
  lines: string[];
  changes?: PreviewTextChange[];
}

/** One field of a record: its text now (`before`) and as the write would set it (`after`). */
export interface PreviewTextChange {
  field: string;
  before: string;
  after: string;
}

/** Identity function that keeps the argument type of a tool definition. */
export function defineTool<Arguments>(tool: Tool<Arguments>): Tool<Arguments> {
  return tool;
}

/** A write effect implies approval; a read needs it only when the tool asks. */
export function needsApproval(tool: Pick<Tool, 'effect' | 'requiresApproval'>): boolean {
  return tool.effect === 'write' || tool.requiresApproval === true;
}

export const TOOL_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/**
 * The tools a deployment knows, by name. A name registered twice is a configuration error
 * raised at cold start, not a silent override.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  private readonly fallback: ((name: string) => Tool | undefined) | undefined;

  /**
   * `fallback` answers names that are not registered here: the API Lambdas use it for MCP
   * tools, whose real definitions only the run's steps list from the servers (docs/mcp.md).
   */
  public constructor(tools: ReadonlyArray<Tool> = [], fallback?: (name: string) => Tool | undefined) {
    for (const tool of tools) this.register(tool);
    this.fallback = fallback;
  }

  /** A registry with these tools added (one run's MCP tools), keeping this one's and its fallback. */
  public extend(tools: ReadonlyArray<Tool>): ToolRegistry {
    return new ToolRegistry([...this.tools.values(), ...tools], this.fallback);
  }

  public register(tool: Tool): void {
    if (!TOOL_NAME_PATTERN.test(tool.name)) {
      throw new Error(`Tool name "${tool.name}" is invalid: use letters, digits, "_" or "-", at most 64.`);
    }
    if (this.tools.has(tool.name)) throw new Error(`Tool "${tool.name}" is registered twice.`);
    this.tools.set(tool.name, tool);
  }

  /**
   * The tool of a name: registered here, else an external run's tool (`<configuration>/<tool>`,
   * which no registered name can be), else the fallback's answer.
   */
  public get(name: string): Tool | undefined {
    return this.tools.get(name) ?? createExternalToolStandIn(name) ?? this.fallback?.(name);
  }

  /** Whether the name is registered here (a fallback's answer does not count). */
  public has(name: string): boolean {
    return this.tools.has(name);
  }

  public names(): string[] {
    return [...this.tools.keys()].sort();
  }
}
