import { type Algorithm, hash, verify } from "@node-rs/argon2";

/** Algorithm.Argon2id; the package declares it as an ambient const enum, which isolated modules cannot read. */
const ARGON2ID = 2 as Algorithm;

/**
 * Passwords are write-only and stored as argon2id (OWASP's minimum: 19 MiB, 2 passes, 1 lane). @node-rs/argon2's
 * async functions run on the libuv thread pool, so hashing never blocks the event loop.
 */
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const hashPassword = (password: string): Promise<string> => hash(password, OPTIONS);

/** False for a malformed stored hash too: a broken credential never logs anyone in. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;

/**
 * Verifies against a throwaway hash with the same parameters, so an unknown identifier costs as much as a known one
 * (no user enumeration by timing).
 */
export async function burnVerification(password: string): Promise<false> {
  dummy ??= hashPassword("roster-dummy-password-for-constant-timing");
  await verifyPassword(await dummy, password);
  return false;
}
