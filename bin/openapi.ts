import { readFile, writeFile } from 'node:fs/promises';
import { createOpenApiDocument } from '../lambdas/contract/openapi-document.js';

/** `npm run openapi`: writes the committed OpenAPI document from the contract's schemas. */
export const OPENAPI_DOCUMENT_PATH = new URL('../docs/openapi.json', import.meta.url);

const packageJson = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
await writeFile(
  OPENAPI_DOCUMENT_PATH,
  `${JSON.stringify(createOpenApiDocument({ version: packageJson.version }), null, 2)}\n`,
);
console.log(`wrote ${OPENAPI_DOCUMENT_PATH.pathname}`);
