import type { AddressInfo } from "node:net";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { type AppDeps, buildApp } from "../../src/app.js";
import { createObservability, type Observability, type ObservabilityOptions } from "../../src/observability/index.js";
import { ManualClock } from "../../src/platform/clock.js";
import { hashSecret } from "../../src/platform/crypto.js";
import { createLogger } from "../../src/platform/logger.js";
import type { Db } from "../../src/storage/database.js";
import type { Webhooks, WebhooksOptions } from "../../src/webhooks/index.js";
import {
  ADMIN_TOKEN,
  LOOPBACK_WEBHOOK_ALLOW,
  PRODUCT,
  PUBLIC_URL,
  TENANT,
  TEST_SECRETS,
  WEBHOOK_SECRET,
} from "./constants.js";
import { createTestDatabase, type TestDatabase } from "./database.js";
import { recordingSink } from "./events.js";
import { type QuerySpy, spyOnQueries } from "./query-spy.js";
import { type SeededClient, seedClient } from "./seed.js";
import { checkedDelivery, type Delivery, startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";
import { testWebhooks } from "./webhooks.js";

// Older imports of these names from here keep working; new code imports them from their own modules.
export { ADMIN_TOKEN, PUBLIC_URL } from "./constants.js";
export { createTestDatabase, type TestDatabase } from "./database.js";

/** The recording sink the `recording` option installs: whatever `events.ts` builds. */
export type Recorder = Awaited<ReturnType<typeof recordingSink>>;

export interface TestAppOptions {
  /** Reuse a database (two app instances on one PostgreSQL); the app then leaves it open on close. */
  readonly database?: TestDatabase;
  readonly secrets?: readonly Buffer[];
  readonly clock?: ManualClock;
  /** Overrides of the app's dependencies and configuration (logger, mapping sources, pools, …). */
  readonly extra?: Partial<AppDeps>;
  /** Directory events go to the recording sink of `events.ts`, readable as `t.recorder`. */
  readonly recording?: boolean;
  /** The app's webhooks module is built here and held by the test as `t.webhooks` (dispatcher driven by hand). */
  readonly webhooks?: boolean | Partial<Omit<WebhooksOptions, "db" | "clock">>;
  /**
   * A real local webhook receiver (`true`: a fresh one, closed with the app) and a seeded SCIM client whose webhook
   * points at it; implies `webhooks`. `t.deliver()` drains the dispatcher and returns what arrived, checked.
   */
  readonly receiver?: boolean | WebhookReceiver;
  /** With `receiver`: more fields of the seeded SCIM client. */
  readonly client?: Record<string, unknown>;
  /** The app runs on a Kysely that logs every statement, readable as `t.queries`. */
  readonly queries?: boolean;
  /** The app listens on 127.0.0.1 and a free port, at `t.url`. */
  readonly listen?: boolean;
  /**
   * The test holds the app's observability (request log writer, metrics, audit) as `t.obs`, webhook delivery
   * outcomes reported to it; implies `webhooks`.
   */
  readonly observed?: boolean | ObservedOptions;
}

/** What `observed` may set of the observability: the request log's buffer, its pool and retention, pools on /metrics. */
export type ObservedOptions = Pick<ObservabilityOptions, "requestLog" | "retentionDays" | "pools" | "writerDb">;

export interface TestApp {
  readonly app: FastifyInstance;
  readonly db: Db;
  readonly database: TestDatabase;
  readonly clock: ManualClock;
  readonly secrets: readonly Buffer[];
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface WithRecorder {
  readonly recorder: Recorder;
}
export interface WithWebhooks {
  readonly webhooks: Webhooks;
}
/** A test app holding its webhooks module, as `createTestApp({ webhooks: true })` gives it. */
export type WebhooksApp = TestApp & WithWebhooks;
export interface WithReceiver extends WithWebhooks {
  readonly receiver: WebhookReceiver;
  /** The SCIM client (tenant TENANT, product PRODUCT) whose webhook points at the receiver. */
  readonly client: SeededClient;
  /**
   * Runs the dispatcher until nothing is claimable and returns what reached the receiver since the last call, in
   * arrival order. Throws if any request is not a signed, well-formed webhook.
   */
  deliver(): Promise<Delivery[]>;
  /** Another SCIM client (organization) on the same app, webhook to the same receiver. */
  seed(client?: Record<string, unknown>): Promise<SeededClient>;
}
export interface WithQueries {
  readonly queries: QuerySpy;
}
export interface WithObservability extends WithWebhooks {
  readonly obs: Observability;
}
export interface WithUrl {
  /** http://127.0.0.1:<port> */
  readonly url: string;
}

/** A test app with a receiver, as `createTestApp({ receiver: true })` gives it. */
export type ReceiverApp = TestApp & WithReceiver;

type On<O, K extends keyof TestAppOptions, T> = O extends { readonly [P in K]: true | object } ? T : unknown;

/** The app a set of options gives: the options switched on add their handles, typed. */
export type TestAppWith<O extends TestAppOptions> = TestApp &
  On<O, "recording", WithRecorder> &
  On<O, "webhooks", WithWebhooks> &
  On<O, "receiver", WithReceiver> &
  On<O, "queries", WithQueries> &
  On<O, "listen", WithUrl> &
  On<O, "observed", WithObservability>;

/**
 * The one test app: buildApp on a real PostgreSQL schema, with a manual clock and the fixed admin token; the options
 * add what a test observes (recorded events, the webhooks module and a receiver, the statements, a real port).
 */
export async function createTestApp<const O extends TestAppOptions = Record<never, never>>(
  options: O = {} as O,
): Promise<TestAppWith<O>> {
  const database = options.database ?? (await createTestDatabase());
  const clock = options.clock ?? new ManualClock(Date.now());
  const secrets = options.secrets ?? TEST_SECRETS;
  const closing: (() => Promise<unknown>)[] = [];
  const handles: Record<string, unknown> = {};
  const deps: Partial<AppDeps> = {};

  if (options.recording === true) {
    const recorder = recordingSink();
    handles.recorder = recorder;
    Object.assign(deps, { eventSink: recorder.sink });
  }
  const withReceiver = options.receiver !== undefined && options.receiver !== false;
  const observed = options.observed === undefined || options.observed === false ? undefined : options.observed;
  let webhookOptions = typeof options.webhooks === "object" ? options.webhooks : {};
  if (observed !== undefined) {
    const given = observed === true ? {} : observed;
    const obs = createObservability({ db: database.db, clock, logger: createLogger("silent"), ...given });
    handles.obs = obs;
    Object.assign(deps, { observability: obs });
    webhookOptions = { wrapSender: obs.wrapSender, ...webhookOptions };
  }
  let webhooks: Webhooks | undefined;
  if (withReceiver || observed !== undefined || (options.webhooks !== undefined && options.webhooks !== false)) {
    webhooks = testWebhooks(database.db, clock, webhookOptions);
    handles.webhooks = webhooks;
    Object.assign(deps, { webhooks });
    // Closing the app alone leaves the dispatcher as it is, so a test can play a process that dies mid-delivery;
    // with a receiver the app owns the whole delivery path and stops it gracefully first.
    const held = webhooks;
    if (withReceiver || observed !== undefined) closing.push(() => held.dispatcher.stop());
  }
  if (options.queries === true) {
    const spy = spyOnQueries(database);
    handles.queries = spy;
    Object.assign(deps, { db: spy.db });
  }

  const app = await buildApp({
    db: database.db,
    clock,
    logger: createLogger((process.env.ROSTER_TEST_LOG_LEVEL as "silent" | undefined) ?? "silent"),
    secrets,
    adminTokenHash: hashSecret(ADMIN_TOKEN),
    publicUrl: () => PUBLIC_URL,
    webhookUrlAllow: LOOPBACK_WEBHOOK_ALLOW,
    ...deps,
    ...options.extra,
  });
  await app.ready();
  closing.push(() => app.close());
  if (handles.queries !== undefined) closing.push(() => (handles.queries as QuerySpy).close());
  if (options.database === undefined) closing.push(() => database.close());

  const t: TestApp = {
    app,
    db: database.db,
    database,
    clock,
    secrets,
    request: (o) => app.inject(o),
    async close() {
      for (const step of closing) await step();
    },
  };

  if (options.listen === true) {
    await app.listen({ host: "127.0.0.1", port: 0 });
    handles.url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  }
  if (withReceiver && webhooks !== undefined) {
    const given = typeof options.receiver === "object" ? options.receiver : undefined;
    const receiver = given ?? (await startWebhookReceiver());
    if (given === undefined) closing.push(() => receiver.close());
    const seed = (client: Record<string, unknown> = {}) =>
      seedClient(t, {
        tenant: TENANT,
        product: PRODUCT,
        webhook: { url: receiver.url, secret: WEBHOOK_SECRET },
        ...client,
      });
    const dispatcher = webhooks.dispatcher;
    let seen = 0;
    Object.assign(handles, {
      receiver,
      seed,
      client: await seed(options.client),
      async deliver() {
        await dispatcher.drain();
        const fresh = receiver.received.slice(seen);
        seen = receiver.received.length;
        return fresh.map((r) => checkedDelivery(r, clock.now().getTime()));
      },
    });
  }
  return Object.assign(t, handles) as TestAppWith<O>;
}
