import { writeFile } from 'node:fs/promises';
import { createOpenApiDocument } from '../lambdas/contract/openapi-document.js';
import { readPackageVersion } from '../lib/package-version.js';

/** `npm run openapi`: writes the committed OpenAPI document from the contract's schemas. */
const OPENAPI_DOCUMENT_PATH = new URL('../docs/openapi.json', import.meta.url);

await writeFile(
  OPENAPI_DOCUMENT_PATH,
  `${JSON.stringify(createOpenApiDocument({ version: readPackageVersion() }), null, 2)}\n`,
);
console.log(`wrote ${OPENAPI_DOCUMENT_PATH.pathname}`);
