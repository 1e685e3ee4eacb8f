import { expect } from "vitest";
import type { TestApp } from "./app.js";
import { adminCall } from "./seed.js";

/** Creates an issued key through the admin API; returns its JSON (with the one-time `secret`). */
export async function createIssuedKey(
  t: TestApp,
  body: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const res = await adminCall(t, "POST", "/issuedApiKeys", { name: "ci", ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

export async function verifyKey(t: TestApp, key: string): Promise<Record<string, unknown>> {
  const res = await adminCall(t, "POST", "/apiKeys:verify", { key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** A raw external key of the given seed, long enough to import. */
export const rawKey = (seed: string | number): string => `ext_live_${String(seed).padStart(24, "0")}`;
