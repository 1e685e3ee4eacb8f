import { afterAll, beforeAll } from "vitest";
import { createTestApp, type TestApp, type TestAppOptions, type TestAppWith } from "./app.js";
import type { ManualClock } from "../../src/platform/clock.js";
import type { TestDatabase } from "./database.js";
import { type SeededClient, seedClient } from "./seed.js";
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";

export interface SuiteOptions extends TestAppOptions {
  /** Seed an organization with one SCIM client (these fields added) before the tests; a receiver seeds its own. */
  readonly seed?: boolean | Record<string, unknown>;
  /** A webhook receiver of the file's own, no client pointed at it (`receiver` seeds one): the suite's `receiver`. */
  readonly hooks?: boolean;
}

export interface Suite<O extends TestAppOptions> {
  /** The test app of the file, built before its first test and closed after its last. */
  readonly t: TestAppWith<O>;
  /** The seeded SCIM client (with `seed` or `receiver`). */
  readonly c: SeededClient;
  /** The app's database and clock, for tests that reach past the HTTP interface. */
  readonly database: TestDatabase;
  readonly clock: ManualClock;
  /** The receiver of `hooks` (or of `receiver`). */
  readonly receiver: WebhookReceiver;
}

/**
 * The setup most test files share: one test app (any `createTestApp` options) and, if asked, one seeded SCIM client,
 * made in a `beforeAll` and closed in an `afterAll` registered here. The handles can be named at the top of the file
 * and used in tests and later hooks; touching them before the suite has started throws.
 */
export function useTestApp<const O extends SuiteOptions = Record<never, never>>(options: O = {} as O): Suite<O> {
  let t: TestAppWith<O> | undefined;
  let c: SeededClient | undefined;
  let receiver: WebhookReceiver | undefined;
  beforeAll(async () => {
    const { seed, hooks, ...appOptions } = options as SuiteOptions;
    if (hooks === true) receiver = await startWebhookReceiver();
    t = (await createTestApp(appOptions)) as TestAppWith<O>;
    const own = (t as Partial<{ client: SeededClient }>).client;
    receiver ??= (t as Partial<{ receiver: WebhookReceiver }>).receiver;
    if (own !== undefined) c = own;
    else if (seed !== undefined && seed !== false) c = await seedClient(t, seed === true ? {} : seed);
  });
  afterAll(async () => {
    await t?.close();
    if (options.hooks === true) await receiver?.close();
  });
  return {
    t: late("the test app", () => t),
    c: late("the seeded client", () => c),
    database: late("the database", () => t?.database),
    clock: late("the clock", () => t?.clock),
    receiver: late("the receiver", () => receiver),
  };
}

/**
 * A second Roster instance on the suite app's database, sharing its clock but not its process-local state (caches,
 * rate-limit windows), as another process of one deployment; closed before the first.
 */
export function useSecondInstance(first: TestApp): TestApp {
  let second: TestApp | undefined;
  beforeAll(async () => {
    second = await createTestApp({ database: first.database, clock: first.clock });
  });
  afterAll(async () => second?.close());
  return late("the second instance", () => second);
}

/** An object whose properties are read from `current()` at the time of use, for handles made in a `beforeAll`. */
function late<T extends object>(what: string, current: () => T | undefined): T {
  const value = (): T => {
    const v = current();
    if (v === undefined) throw new Error(`${what} exists once the suite's beforeAll has run`);
    return v;
  };
  return new Proxy({} as T, {
    get(_, key) {
      const v = value();
      const member: unknown = Reflect.get(v, key, v);
      return typeof member === "function" ? member.bind(v) : member;
    },
    has: (_, key) => Reflect.has(value(), key),
    ownKeys: () => Reflect.ownKeys(value()),
    getOwnPropertyDescriptor(_, key) {
      const d = Reflect.getOwnPropertyDescriptor(value(), key);
      return d === undefined ? undefined : { ...d, configurable: true };
    },
  });
}
