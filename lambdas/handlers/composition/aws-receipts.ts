import { KMSClient } from '@aws-sdk/client-kms';
import { DynamoReceiptChainStore } from '../../adapters/dynamo/receipt-chain-store.js';
import { RunTable } from '../../adapters/dynamo/run-table.js';
import { KmsReceiptSigner } from '../../adapters/kms-receipt-signer.js';
import { systemClock } from '../../core/ports.js';
import type { ReceiptDependencies } from '../../core/receipts/receipt-recording.js';
import { lambdaEnvironment } from '../config.js';
import { awsRunStoreOptions } from './aws-base-dependencies.js';

let receipts: ReceiptDependencies | undefined;
let signing: ReceiptDependencies | undefined;

/**
 * Receipt chains on the run table, kept like decision records (docs/receipts.md): what the
 * functions that cancel or expire runs append to and GET /runs/{id}/receipt reads. No signer.
 */
export function awsReceipts(): ReceiptDependencies {
  receipts ??= { chain: createChainStore() };
  return receipts;
}

/**
 * The deciding function's receipts: the chain and the KMS signer over the receipt key, whose ARN
 * only this function is told (a cold start without it fails, naming the variable).
 */
export function awsSigningReceipts(): ReceiptDependencies {
  const keyArn = lambdaEnvironment().COUNTERSIGN_RECEIPT_KEY_ARN;
  if (!keyArn) {
    throw new Error('countersign configuration is invalid: COUNTERSIGN_RECEIPT_KEY_ARN is not set.');
  }
  signing ??= { ...awsReceipts(), signer: new KmsReceiptSigner({ client: new KMSClient({}), keyArn }) };
  return signing;
}

function createChainStore(): DynamoReceiptChainStore {
  const { client, tableName, retention } = awsRunStoreOptions();
  const table = new RunTable(client, tableName, retention, systemClock);
  return new DynamoReceiptChainStore({ client, tableName, removeAfter: () => table.decisionRemoval() });
}
