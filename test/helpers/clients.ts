import { afterAll, beforeAll } from "vitest";
import { createTestApp, type TestApp } from "./app.js";
import { adminCall, clientIn, type SeededClient } from "./seed.js";

/** A file's test app and its SCIM clients by name, filled in before the file's tests run. */
export type AppWithClients<K extends string> = { t: TestApp } & Record<K, SeededClient>;

interface Started {
  readonly t: TestApp;
  close(): Promise<void>;
}

/**
 * Registers the hooks that start a test app (`start`, a plain one by default) with one SCIM client per entry of
 * `bodies` (the admin API's create body; organization and secret are added) and close it after the file: each
 * client in its own organization, or all in one with `sameOrganization`.
 */
export function appWithClients<K extends string>(
  bodies: Record<K, Record<string, unknown>>,
  options: { readonly sameOrganization?: boolean; readonly start?: () => Promise<Started> } = {},
): AppWithClients<K> {
  const ctx = {} as AppWithClients<K>;
  let started: Started | undefined;
  beforeAll(async () => {
    started = options.start === undefined ? await plainApp() : await options.start();
    const t = started.t;
    Object.assign(ctx, { t });
    const newOrganization = async () => (await adminCall(t, "POST", "/organizations", { name: "Acme" })).json().id;
    const shared = options.sameOrganization === true ? await newOrganization() : undefined;
    for (const [name, body] of Object.entries<Record<string, unknown>>(bodies)) {
      Object.assign(ctx, { [name]: await clientIn(t, shared ?? (await newOrganization()), body) });
    }
  });
  afterAll(async () => {
    await started?.close();
  });
  return ctx;
}

async function plainApp(): Promise<Started> {
  const t = await createTestApp();
  return { t, close: () => t.close() };
}
