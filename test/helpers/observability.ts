import type { Observability } from "../../src/observability/index.js";
import type { Webhooks } from "../../src/webhooks/index.js";
import { createTestApp, type ObservedOptions, type TestApp } from "./app.js";

export interface ObservedApp {
  readonly t: TestApp;
  readonly obs: Observability;
  /** The app's webhooks module, delivery outcomes reported to `obs` (dispatcher driven by hand). */
  readonly webhooks: Webhooks;
  close(): Promise<void>;
}

/** @deprecated `useTestApp({ observed: options })` gives the same app, with `obs` and `webhooks` on the suite. */
export async function createObservedApp(options: ObservedOptions = {}): Promise<ObservedApp> {
  const t = await createTestApp({ observed: options });
  return { t, obs: t.obs, webhooks: t.webhooks, close: () => t.close() };
}
