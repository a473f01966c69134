/**
 * `@aws-sdk/client-kms` inside the Encryption SDK's side module. The SDK's KMS keyring names
 * a default client (`new KMS(...)` per region) that countersign never uses: it always hands
 * the keyring a client provider built from the handler bundle's own KMS client
 * (lambdas/adapters/kms-key-wrapping.ts), which shares the SDK core the bundle has already
 * loaded. Without this alias the side module carried a second copy of that core, about half
 * of its first load (`npm run bench`, first request). Constructing it is a bug, and says so.
 */
export class KMS {
  public constructor() {
    throw new Error(
      "countersign: the Encryption SDK's default KMS client is not shipped; pass the KMS keyring a clientProvider (createKmsKeyWrapping).",
    );
  }
}
