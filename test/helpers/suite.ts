import { afterAll, beforeAll } from "vitest";
import type { ManualClock } from "../../src/platform/clock.js";
import { createTestApp, type TestApp, type TestAppOptions, type TestAppWith } from "./app.js";
import { createTestDatabase, type TestDatabase, type TestDatabaseOptions } from "./database.js";
import { type RosterProcess, startRosterProcess } from "./roster-process.js";
import { adminCall, clientIn, type SeededClient, seedClient } from "./seed.js";
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";

export interface SuiteOptions extends TestAppOptions {
  /**
   * Seed an organization with one SCIM client (these fields added, or the fields a function of the suite's receiver
   * gives) before the tests; a receiver seeds its own.
   */
  readonly seed?:
    | boolean
    | Record<string, unknown>
    | ((hooks: { receiver: WebhookReceiver }) => Record<string, unknown>);
  /**
   * `false`: no app, only the database (and the receiver of `hooks`), for a file whose tests start and close
   * instances of their own on it (`createTestApp({ database })`).
   */
  readonly app?: false;
  /** A webhook receiver of the file's own, no client pointed at it (`receiver` seeds one): the suite's `receiver`. */
  readonly hooks?: boolean;
  /**
   * SCIM clients by name (the admin API's create body; organization and secret are added), each in an organization
   * of its own, or all in one with `sameOrganization`: the suite's `clients`.
   */
  readonly clients?: Record<string, Record<string, unknown>>;
  readonly sameOrganization?: boolean;
  /**
   * A second instance on the same database, sharing the clock but not the process-local state (caches, rate-limit
   * windows), as another process of one deployment: the suite's `second`, closed before the first.
   */
  readonly secondInstance?: boolean | Omit<TestAppOptions, "database" | "clock">;
}

/** Roster as `npm start` runs it, a child process on a database of its own, instead of an in-process app. */
export interface ProcessSuiteOptions extends TestDatabaseOptions {
  /**
   * ROSTER_* variables of the child (ROSTER_DATABASE_URL, ROSTER_HOST and the test credentials are set), or a
   * function giving them, called when the suite starts (after the file's earlier `beforeAll` hooks).
   */
  readonly process: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
}

/** The second instance a `secondInstance` option gives, its own options' handles typed. */
type SecondOf<O> = O extends { readonly secondInstance: infer S extends TestAppOptions } ? TestAppWith<S> : TestApp;

/** The clients a `clients` option names, by name. */
type ClientsOf<O> = O extends { readonly clients: infer C } ? { readonly [K in keyof C]: SeededClient } : never;

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
  /** The clients of `clients`, by name (each usable once the suite has started). */
  readonly clients: ClientsOf<O>;
  /** The second instance of `secondInstance`. */
  readonly second: SecondOf<O>;
  /** With `observed`: the app's observability and webhooks module, also on `t`. */
  readonly obs: TestAppWith<{ observed: true }>["obs"];
  readonly webhooks: TestAppWith<{ webhooks: true }>["webhooks"];
}

export interface ProcessSuite {
  /** The child process, started before the file's first test and stopped (SIGTERM) after its last. */
  readonly roster: RosterProcess;
  /** Its database; the test may restart the child on it (`startRosterProcess(database.url, …)`). */
  readonly database: TestDatabase;
}

/**
 * The one test harness: registers a `beforeAll` that makes what the options ask for — an in-process test app (any
 * `createTestApp` option) with its seeded client, named clients, a second instance and a receiver; or, with
 * `process`, Roster as a child process — and an `afterAll` that closes it all. The handles can be named at the top of
 * the file and used in tests and later hooks; touching them before the suite has started throws.
 */
export function useTestApp(options: ProcessSuiteOptions): ProcessSuite;
export function useTestApp<const O extends SuiteOptions = Record<never, never>>(options?: O): Suite<O>;
export function useTestApp(options: SuiteOptions | ProcessSuiteOptions = {}): Suite<SuiteOptions> | ProcessSuite {
  if ("process" in options) return useProcess(options);
  let t: TestApp | undefined;
  let c: SeededClient | undefined;
  let second: TestApp | undefined;
  let receiver: WebhookReceiver | undefined;
  let database: TestDatabase | undefined;
  const made: Record<string, SeededClient> = {};
  beforeAll(async () => {
    const { seed, hooks, clients: bodies, sameOrganization, secondInstance, app: withApp, ...appOptions } = options;
    if (hooks === true) receiver = await startWebhookReceiver();
    if (withApp === false) {
      database = await createTestDatabase();
      return;
    }
    t = await createTestApp(appOptions);
    const own = (t as Partial<{ client: SeededClient }>).client;
    receiver ??= (t as Partial<{ receiver: WebhookReceiver }>).receiver;
    if (own !== undefined) c = own;
    else if (typeof seed === "function")
      c = await seedClient(t, seed({ receiver: late("the receiver", () => receiver) }));
    else if (seed !== undefined && seed !== false) c = await seedClient(t, seed === true ? {} : seed);
    if (bodies !== undefined) {
      const app = t;
      const newOrganization = async () => (await adminCall(app, "POST", "/organizations", { name: "Acme" })).json().id;
      const shared = sameOrganization === true ? await newOrganization() : undefined;
      for (const [name, body] of Object.entries(bodies)) {
        made[name] = await clientIn(app, shared ?? (await newOrganization()), body);
      }
    }
    if (secondInstance !== undefined && secondInstance !== false) {
      const own = secondInstance === true ? {} : secondInstance;
      second = await createTestApp({ ...own, database: t.database, clock: t.clock });
    }
  });
  afterAll(async () => {
    await second?.close();
    await t?.close();
    await database?.close();
    if (options.hooks === true) await receiver?.close();
  });
  // One handle per named client, so a file can destructure them where it calls this.
  const clients = Object.fromEntries(
    Object.keys(options.clients ?? {}).map((name) => [name, late(`the client ${name}`, () => made[name])]),
  );
  const app = () => t as (TestApp & Partial<Record<"obs" | "webhooks", object>>) | undefined;
  return {
    t: late("the test app", () => t) as TestAppWith<SuiteOptions>,
    c: late("the seeded client", () => c),
    database: late("the database", () => t?.database ?? database),
    clock: late("the clock", () => t?.clock),
    receiver: late("the receiver", () => receiver),
    clients: clients as ClientsOf<SuiteOptions>,
    second: late("the second instance", () => second) as SecondOf<SuiteOptions>,
    obs: late("the observability", () => app()?.obs) as Suite<SuiteOptions>["obs"],
    webhooks: late("the webhooks module", () => app()?.webhooks) as Suite<SuiteOptions>["webhooks"],
  };
}

function useProcess(options: ProcessSuiteOptions): ProcessSuite {
  let database: TestDatabase | undefined;
  let roster: RosterProcess | undefined;
  beforeAll(async () => {
    const env = typeof options.process === "function" ? await options.process() : options.process;
    database = await createTestDatabase({ migrated: options.migrated ?? "none" });
    roster = await startRosterProcess(database.url, env);
  });
  afterAll(async () => {
    await roster?.stop();
    await database?.close();
  });
  return {
    roster: late("the Roster process", () => roster),
    database: late("the database", () => database),
  };
}

/**
 * @deprecated `useTestApp({ secondInstance: true })` gives it as `second`. A second Roster instance on the suite
 * app's database, sharing its clock, closed before the first.
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
