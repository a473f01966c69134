import { type KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { RECEIPT_SIGNING_ALGORITHM } from '../core/receipts/chain-entry.js';
import type { ReceiptSigner } from '../core/receipts/receipt-ports.js';

/**
 * The deployed receipt signer: KMS `Sign` with the construct's asymmetric `ECC_NIST_P256` key,
 * `ECDSA_SHA_256` over the RAW message (KMS hashes it; the message is short by construction, far
 * below Sign's 4,096 bytes). KMS returns the signature DER-encoded, which is what a receipt holds.
 *
 * @example
 * const signer = new KmsReceiptSigner({ client: new KMSClient({}), keyArn });
 */
export class KmsReceiptSigner implements ReceiptSigner {
  public constructor(private readonly props: { readonly client: KMSClient; readonly keyArn: string }) {}

  public async signingKeyId(): Promise<string> {
    return this.props.keyArn;
  }

  public async sign(message: Uint8Array): Promise<Uint8Array> {
    const { Signature: signature } = await this.props.client.send(
      new SignCommand({
        KeyId: this.props.keyArn,
        Message: message,
        MessageType: 'RAW',
        SigningAlgorithm: RECEIPT_SIGNING_ALGORITHM,
      }),
    );
    if (!signature || signature.byteLength === 0) throw new Error('KMS Sign returned no signature.');
    return signature;
  }
}
