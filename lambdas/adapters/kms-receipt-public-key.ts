import { createPublicKey } from 'node:crypto';
import { GetPublicKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { CountersignError } from '../core/errors.js';
import { RECEIPT_SIGNING_ALGORITHM } from '../core/receipts/chain-entry.js';
import type { ReceiptKey } from '../core/receipts/verify-receipt.js';

/**
 * The public half of a receipt signing key, from KMS `GetPublicKey` (SPKI DER), with the key ARN
 * KMS answers for it: `countersign verify --key-id` checks every signed entry names that ARN.
 * A key that is not an `ECC_NIST_P256` signing key for `ECDSA_SHA_256` is refused by name.
 *
 * @example
 * const key = await fetchReceiptPublicKey(new KMSClient({ region }), 'alias/countersign-receipts');
 */
export async function fetchReceiptPublicKey(client: KMSClient, keyId: string): Promise<Required<ReceiptKey>> {
  const answer = await client.send(new GetPublicKeyCommand({ KeyId: keyId }));
  if (
    answer.KeySpec !== 'ECC_NIST_P256' ||
    answer.KeyUsage !== 'SIGN_VERIFY' ||
    !answer.SigningAlgorithms?.includes(RECEIPT_SIGNING_ALGORITHM) ||
    !answer.PublicKey ||
    !answer.KeyId
  ) {
    throw new CountersignError(
      'bad-request',
      `KMS key "${keyId}" is not an ECC_NIST_P256 signing key for ${RECEIPT_SIGNING_ALGORITHM}.`,
    );
  }
  return {
    keyId: answer.KeyId,
    publicKey: createPublicKey({ key: Buffer.from(answer.PublicKey), format: 'der', type: 'spki' }),
  };
}
