import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { RUN_EVENT_SCHEMA_NAME } from '../../lambdas/contract/openapi-document.js';
import { ROUTES } from '../../lambdas/contract/routes.js';

/** The committed document, as the API serves it at GET /openapi.json. */
export const COMMITTED_OPENAPI_PATH = new URL('../../docs/openapi.json', import.meta.url);

interface ResponseObject {
  $ref?: string;
  content?: Record<string, unknown>;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
}

const DOCUMENT_ID = 'openapi.json';

/**
 * Checks answers against the committed OpenAPI document (not the schemas it was generated
 * from): the status must be one the operation documents, the content type one its response
 * lists, and a JSON body must validate against that response's schema. A JSON Schema 2020-12
 * validator reads the document's own schemas, references and all.
 */
export class OpenApiResponseValidator {
  private readonly document: OpenApiDocument;
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  public constructor(document: unknown = JSON.parse(readFileSync(COMMITTED_OPENAPI_PATH, 'utf8'))) {
    this.document = document as OpenApiDocument;
    // Not strict: the document carries OpenAPI keywords beside the schemas (`paths`, `info`, …).
    this.ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
    this.ajv.addSchema(document as object, DOCUMENT_ID);
  }

  /**
   * The problem with an answer, or `undefined` when the document describes it. `path` is the
   * request's path without its query.
   */
  public problemWith(answer: {
    method: string;
    path: string;
    status: number;
    contentType: string | null;
    text: string | undefined;
  }): string | undefined {
    const route = matchRoute(answer.method, answer.path);
    const label = route
      ? `${route.operationId} (${answer.method} ${route.path})`
      : `${answer.method} ${answer.path}`;
    if (!route) {
      // Not an operation of the API (an unknown path or method): only a documented refusal may answer.
      if (answer.status < 400) return `${label} is not in the document, yet it answered ${answer.status}.`;
      return this.problemWithJson(label, answer, '#/components/schemas/ErrorBody');
    }
    const operationPointer = `#/paths/${escapePointer(route.path)}/${route.method.toLowerCase()}`;
    const responses = this.document.paths[route.path]?.[route.method.toLowerCase()]?.responses ?? {};
    const listed = responses[String(answer.status)];
    // A refusal shared by many operations is written once, under components/responses.
    const responsePointer = listed?.$ref ?? `${operationPointer}/responses/${answer.status}`;
    const response = listed?.$ref ? this.resolve(listed.$ref) : listed;
    if (!response) {
      return `${label} answered ${answer.status}, which the document does not list (it lists ${Object.keys(responses).join(', ')}).`;
    }
    const mediaType = (answer.contentType ?? '').split(';')[0]?.trim() ?? '';
    // A response the document lists without content (304 Not Modified) carries no body.
    if (response.content === undefined && mediaType === '' && !answer.text) return undefined;
    if (!response.content?.[mediaType]) {
      return `${label} answered ${answer.status} as "${mediaType}", which the document does not list (it lists ${Object.keys(response.content ?? {}).join(', ')}).`;
    }
    if (mediaType !== 'application/json' || answer.text === undefined) return undefined;
    const pointer = `${responsePointer}/content/${escapePointer(mediaType)}/schema`;
    return this.problemWithJson(`${label} ${answer.status}`, answer, pointer);
  }

  /** The problem with one server-sent event of GET /runs/{id}/events, or `undefined`. */
  public problemWithEvent(event: { event: string; data: unknown }): string | undefined {
    const name = event.event;
    const validate = this.validatorOf(`#/components/schemas/${RUN_EVENT_SCHEMA_NAME}`);
    if (validate(event)) return undefined;
    return `The "${name}" event does not match the document: ${formatValidationErrors(validate)}`;
  }

  /** The object a local `#/…` reference points at. */
  private resolve(reference: string): ResponseObject | undefined {
    let value: unknown = this.document;
    for (const segment of reference.replace(/^#\//, '').split('/')) {
      const key = segment.replaceAll('~1', '/').replaceAll('~0', '~');
      value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    }
    return value as ResponseObject | undefined;
  }

  private problemWithJson(label: string, answer: { text: string | undefined }, pointer: string) {
    let body: unknown;
    try {
      body = JSON.parse(answer.text ?? '');
    } catch {
      return `${label}: the body is not JSON.`;
    }
    const validate = this.validatorOf(pointer);
    if (validate(body)) return undefined;
    return `${label}: the body does not match the document: ${formatValidationErrors(validate)}`;
  }

  private validatorOf(pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }
}

/** The first mismatch, with the path of the value that does not match (`/pendingTools/0/preview`). */
function formatValidationErrors(validate: ValidateFunction): string {
  const error = validate.errors?.[0];
  if (!error) return 'invalid';
  const extra =
    error.params && 'additionalProperty' in error.params ? ` ("${error.params.additionalProperty}")` : '';
  return `${error.instancePath || '(the body)'} ${error.message ?? 'is invalid'}${extra}`;
}

function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * The manifest route a request reached: `{name}` matches one non-empty segment, and of several
 * matches the one with the most literal segments wins (`/admin/skills/ingest` over `{skillId}`).
 */
export function matchRoute(method: string, path: string): (typeof ROUTES)[number] | undefined {
  const segments = path.split('/');
  let best: { route: (typeof ROUTES)[number]; literals: number } | undefined;
  for (const route of ROUTES) {
    if (route.method !== method.toUpperCase()) continue;
    const template = route.path.split('/');
    if (template.length !== segments.length) continue;
    let literals = 0;
    const matches = template.every((part, position) => {
      const actual = segments[position] ?? '';
      if (/^\{[A-Za-z]+\}$/.test(part)) return actual.length > 0;
      literals += 1;
      return part === actual;
    });
    if (matches && (!best || literals > best.literals)) best = { route, literals };
  }
  return best?.route;
}

let shared: OpenApiResponseValidator | undefined;

/** One validator of the committed document per test file. */
export function committedDocumentValidator(): OpenApiResponseValidator {
  shared ??= new OpenApiResponseValidator();
  return shared;
}

/**
 * A fetch that checks every answer against the committed OpenAPI document and fails (rejects)
 * with the mismatch, so an end-to-end test cannot pass on an answer the document does not
 * describe. An event stream is checked by its status and content type here, and event by
 * event where it is read (test/support/server-sent-events.ts).
 */
export function createValidatingFetch(
  validator: OpenApiResponseValidator = committedDocumentValidator(),
  baseFetch: typeof fetch = fetch,
): typeof fetch {
  return async (input, init) => {
    const response = await baseFetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    const contentType = response.headers.get('content-type');
    const streamed = contentType?.startsWith('text/event-stream') === true;
    const problem = validator.problemWith({
      method,
      path: url.pathname,
      status: response.status,
      contentType,
      text: streamed ? undefined : await response.clone().text(),
    });
    if (problem) throw new Error(`The answer does not match docs/openapi.json: ${problem}`);
    return response;
  };
}
