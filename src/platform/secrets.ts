import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";

/**
 * ROSTER_SECRETS: the configured keys, else generated ones. An in-memory database (`keep: "memory"`) keeps its key
 * in the process (nothing it sealed outlives it); otherwise the generated key is kept in the data dir (`secrets`,
 * mode 0600), so sealed values and cursors stay readable across restarts. Call it after the data dir is locked
 * (openStorage), so two processes never race to generate it.
 */
export async function resolveSecrets(
  configured: readonly Buffer[] | undefined,
  keep: { readonly dataDir: string } | "memory",
): Promise<readonly Buffer[]> {
  if (configured !== undefined) return configured;
  if (keep === "memory") return [randomBytes(48)];
  const dir = resolve(keep.dataDir);
  await mkdir(dir, { recursive: true });
  const file = join(dir, "secrets");
  try {
    const keys = (await readFile(file, "utf8"))
      .trim()
      .split(",")
      .filter((k) => k !== "");
    if (keys.length > 0) return keys.map((k) => Buffer.from(k, "utf8"));
  } catch {
    // first start: generate below
  }
  const key = randomBytes(48).toString("base64url");
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  return [Buffer.from(key, "utf8")];
}
