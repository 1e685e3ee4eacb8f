import { beforeAll } from "vitest";
import type { TestApp } from "./app.js";
import type { SeededClient } from "./seed.js";
import { useTestApp } from "./suite.js";

/** A file's test app and its SCIM clients by name, filled in before the file's tests run. */
export type AppWithClients<K extends string> = { t: TestApp } & Record<K, SeededClient>;

/**
 * @deprecated `useTestApp({ clients: bodies, sameOrganization })` gives the same clients as `clients`. Registers
 * the hooks that start a plain test app with one SCIM client per entry of `bodies`.
 */
export function appWithClients<K extends string>(
  bodies: Record<K, Record<string, unknown>>,
  options: { readonly sameOrganization?: boolean } = {},
): AppWithClients<K> {
  const ctx = {} as AppWithClients<K>;
  const suite = useTestApp({ clients: bodies, sameOrganization: options.sameOrganization === true });
  beforeAll(() => {
    Object.assign(ctx, { t: suite.t }, { ...suite.clients });
  });
  return ctx;
}
