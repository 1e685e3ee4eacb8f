import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryId,
  RootOperationNode,
} from "kysely";
import type { QueryResult, UnknownRow } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, createTestDatabase, type ReceiverApp, type TestDatabase } from "../helpers/app.js";
import { scim } from "../helpers/seed.js";
import { kinds } from "../helpers/webhook-receiver.js";
import { USER_SCHEMA } from "../helpers/constants.js";

/**
 * A claim that commits while its answer is lost — the connection cut between the commit and the rows reaching
 * Roster, as a terminated backend or a reset does — must not leave its events waiting out their lease: the
 * dispatcher releases what that claim took and delivers it on its next round. The clock does not move here, so a
 * lease could never expire.
 */
class LoseNextClaimAnswer implements KyselyPlugin {
  armed = false;
  readonly #claims = new WeakSet<QueryId>();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node as { kind: string; sqlFragments?: readonly string[] };
    if (node.kind === "RawNode" && node.sqlFragments?.join("").includes("claim_token ="))
      this.#claims.add(args.queryId);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.armed && this.#claims.has(args.queryId)) {
      this.armed = false;
      throw new Error("Connection terminated unexpectedly");
    }
    return args.result;
  }
}

const losing = new LoseNextClaimAnswer();
let database: TestDatabase;
let e2e: ReceiverApp;

beforeAll(async () => {
  database = await createTestDatabase();
  e2e = await createTestApp({ receiver: true, database, webhooks: { bookkeepingDb: database.db.withPlugin(losing) } });
});

afterAll(async () => {
  await e2e.close();
  await database.close();
});

describe("a claim whose answer was lost", () => {
  it("is released and its events delivered on the next round, not after the lease", async () => {
    const created = await scim(e2e, e2e.client, "POST", "/Users", {
      schemas: [USER_SCHEMA],
      userName: "lost-claim@example.com",
    });
    expect(created.statusCode).toBe(201);

    losing.armed = true;
    await expect(e2e.webhooks.dispatcher.runOnce()).rejects.toThrow("Connection terminated unexpectedly");
    expect(losing.armed).toBe(false);
    expect(e2e.receiver.received).toHaveLength(0);

    expect(kinds(await e2e.deliver())).toEqual(["user.created"]);
  });
});
