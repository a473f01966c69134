import { readFileSync } from 'node:fs';

/** One recorded HTTP response of a model provider (see test/fixtures/models/README.md). */
export interface ModelFixture {
  statusCode: number;
  headers: Record<string, string>;
  body?: unknown;
  rawBody?: string;
}

/** Reads `test/fixtures/models/<name>` (for example `bedrock/converse-tool-use.json`). */
export function loadModelFixture(name: string): ModelFixture {
  const url = new URL(`../../fixtures/models/${name}`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as ModelFixture;
}

/** The bytes the fixture's server would send. */
export function fixtureBodyText(fixture: ModelFixture): string {
  return fixture.rawBody ?? JSON.stringify(fixture.body);
}
