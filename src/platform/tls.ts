import { readFile } from "node:fs/promises";
import { createSecureContext } from "node:tls";

/** A certificate chain and its private key, PEM, as Node's `https` and `setSecureContext` take them. */
export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/**
 * Reads the two PEM files and checks that they make a usable context (the key matches the certificate) before
 * anything serves with them: a half-replaced pair is refused here, not at the next client's handshake.
 */
export async function readTls(files: { readonly certFile: string; readonly keyFile: string }): Promise<TlsMaterial> {
  const [cert, key] = await Promise.all([readFile(files.certFile), readFile(files.keyFile)]);
  createSecureContext({ cert, key });
  return { cert, key };
}
