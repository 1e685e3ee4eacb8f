import { sql } from "kysely";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIssuedKey } from "../helpers/api-keys.js";
import { openExplainer, planOf } from "../helpers/query-spy.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { adminCall, scim } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

/**
 * Keys follow their person without slowing anything down: verification reads the actor identity by primary key,
 * and the deleting transaction finds an identity's keys by index. Plans are taken with `enable_seqscan = off` on
 * 5000 analysed identities, each with a key, so a statement without a usable index would show a Seq Scan.
 */
const { t, c, database } = useTestApp({ queries: true, seed: true });
let explainer: pg.Client;

beforeAll(async () => {
  await sql`insert into identities (id, organization_id, active, user_name, scim, created_at, updated_at, modified_hour)
    select gen_random_uuid(), ${c.organizationId}::uuid, g % 2 = 0, 'bulk' || g || '@example.com',
      '{}'::jsonb, now(), now(), date_bin('1 hour', now(), timestamptz '2000-01-01 00:00:00+00')
    from generate_series(1, 5000) g`.execute(database.db);
  await sql`insert into api_keys (key_id, kind, organization_id, name, actor_id, create_time, update_time)
    select gen_random_uuid(), 'issued', organization_id, 'bulk', id::text, now(), now() from identities`.execute(
    database.db,
  );
  await sql`analyze`.execute(database.db);
  explainer = await openExplainer(database);
});
afterAll(async () => {
  await explainer.end();
});

async function plansOfApiKeyQueries(run: () => Promise<void>): Promise<string[]> {
  const before = t.queries.queries.length;
  await run();
  const ran = t.queries.queries.slice(before).filter((q) => /\bapi_keys\b/.test(q.sql));
  expect(ran.length).toBeGreaterThan(0);
  const plans: string[] = [];
  for (const q of ran) {
    plans.push(await planOf(explainer, q));
  }
  return plans;
}

/** The plans auto_explain logs for a statement and every statement nested in it (triggers, functions), rolled back. */
async function nestedPlans(statement: string, parameters: unknown[]): Promise<string[]> {
  const notices: string[] = [];
  const listen = (n: { message?: string | undefined }) => {
    notices.push(n.message ?? "");
  };
  explainer.on("notice", listen);
  await explainer.query("begin");
  try {
    await explainer.query("load 'auto_explain'");
    await explainer.query("set local auto_explain.log_min_duration = 0");
    await explainer.query("set local auto_explain.log_nested_statements = on");
    await explainer.query("set local auto_explain.log_level = notice");
    await explainer.query(statement, parameters);
  } finally {
    await explainer.query("rollback");
    explainer.off("notice", listen);
  }
  return notices;
}

describe("keys follow their person, served by indexes", () => {
  it("verification reads key, identity and organization by primary key", async () => {
    const identity = await database.db.selectFrom("identities").select("id").limit(1).executeTakeFirstOrThrow();
    const key = await createIssuedKey(t, { organization_id: c.organizationId, actor_id: identity.id });
    const plans = await plansOfApiKeyQueries(async () => {
      const res = await adminCall(t, "POST", "/apiKeys:verify", { key: key.secret });
      expect(res.statusCode).toBe(200);
    });
    for (const plan of plans) {
      expect(plan).not.toContain("Seq Scan");
      expect(plan).toContain("identities_pkey");
    }
  });

  it("an organization's key list reads each key's identity by primary key", async () => {
    const plans = await plansOfApiKeyQueries(async () => {
      const res = await adminCall(t, "GET", `/issuedApiKeys?organization_id=${c.organizationId}&page_size=100`);
      expect(res.statusCode).toBe(200);
      expect(res.json().issued_api_keys.map((k: { state: string }) => k.state)).toContain("SUSPENDED");
    });
    for (const plan of plans) expect(plan).not.toContain("Seq Scan");
  });

  it("deleting an identity finds its keys by index (the trigger's own plan, via auto_explain)", async () => {
    const identity = await database.db.selectFrom("identities").select("id").limit(1).executeTakeFirstOrThrow();
    const notices = await nestedPlans("delete from identities where id = $1", [identity.id]);
    const trigger = notices.find((n) => n.includes("update api_keys"));
    expect(trigger, notices.join("\n---\n")).toBeDefined();
    expect(trigger).toContain("api_keys_actor_identity_idx");
    expect(trigger).not.toContain("Seq Scan on api_keys");
  });

  it("a tripped connection's checks find its held rows by index, even with plans cached while none was held", async () => {
    // held_events is empty nearly all the time, so autovacuum analyzes it empty, and a plan cached then is a
    // sequential scan: on every connection that planned the checks before a trip, each later write would read every
    // held row (~1 ms at 3 000 rows) until the next analyze. The explainer's session plans both checks first.
    await sql`vacuum analyze held_events`.execute(database.db);
    // One held row of another user: the function's own check of a batch's keys runs (and caches its plan) only
    // while the connection holds something, and a trip's first held writes plan it on a table of one page.
    await sql`insert into held_events (id, client_id, organization_id, event, ordering_key, data, create_time)
      values (gen_random_uuid(), ${c.clientId}, ${c.organizationId}::uuid, 'user.updated', 'somebody', '{}', now())`.execute(
      database.db,
    );
    const nobody = (id: string) => JSON.stringify([{ id, event: "user.updated", orderingKey: "nobody", data: "{}" }]);
    const routeEvents = "select * from roster_route_events(true, $1, $2, now(), false, null, $3::json, $4)";
    for (let i = 0; i < 8; i++) {
      await explainer.query("select roster_holds_any($1, $2)", [c.clientId, ["nobody"]]);
      await explainer.query("begin");
      await explainer.query(routeEvents, [
        c.organizationId,
        c.clientId,
        nobody(crypto.randomUUID()),
        crypto.randomUUID(),
      ]);
      await explainer.query("rollback");
    }
    await sql`insert into deprovisioning_guards (client_id, tripped_time) values (${c.clientId}, now())
      on conflict (client_id) do update set tripped_time = now()`.execute(database.db);
    await sql`insert into held_events (id, client_id, organization_id, event, ordering_key, data, create_time)
      select gen_random_uuid(), ${c.clientId}, ${c.organizationId}::uuid, 'user.updated', gen_random_uuid()::text,
        '{}', now() from generate_series(1, 3000)`.execute(database.db);

    const lookup = (await nestedPlans("select roster_holds_any($1, $2)", [c.clientId, ["nobody"]])).find((n) =>
      n.includes("held_events h"),
    );
    expect(lookup).toContain("held_events_client_key_idx");
    expect(lookup).not.toContain("Seq Scan on held_events");
    const notices = await nestedPlans(routeEvents, [
      c.organizationId,
      c.clientId,
      nobody(crypto.randomUUID()),
      crypto.randomUUID(),
    ]);
    const check = notices.find((n) => n.includes("lateral") && n.includes("held_events h"));
    expect(check, notices.join("\n---\n")).toBeDefined();
    expect(check).toContain("held_events_client_key_idx");
    expect(notices.join("\n")).not.toContain("Seq Scan on held_events");

    // A write of a user that holds nothing flows, and asks the tripped connection's held rows through the function.
    const created = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "held-lookup@example.com" });
    expect(created.statusCode, created.body).toBe(201);
    // The instance remembers the user from its creation, whose event flowed, and would leave the test out: a write
    // of the row elsewhere (as by another instance) makes its write read the row and test.
    await sql`update identities set version = version + 1 where id = ${created.json().id as string}`.execute(
      database.db,
    );
    const before = t.queries.queries.length;
    const patched = await scim(t, c, "PATCH", `/Users/${created.json().id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "displayName", value: "Still flowing" }],
    });
    expect(patched.statusCode, patched.body).toBe(200);
    // The PATCH's own statement: the connection's first request also writes its `connection.activated` event.
    const write = t.queries.queries
      .slice(before)
      .find((q) => q.sql.includes("roster_holds_any") && q.sql.includes("update identities"));
    expect(write).toBeDefined();
    // Asked once per statement, however the planner lays the statement out: the write is run again in a transaction
    // rolled back, its events removed first so their ids are free.
    const { rows: written } = await sql<{ id: string }>`select id from directory_events
      where data::jsonb->>'id' = ${created.json().id as string} and event = 'user.updated'`.execute(database.db);
    const eventIds = written.map((e) => e.id);
    expect(eventIds.length).toBe(1);
    await explainer.query("begin");
    try {
      await explainer.query("delete from directory_events where id = any($1::uuid[])", [eventIds]);
      // The write is version-guarded and asks nothing when its update finds no row: give it back its version.
      await explainer.query("update identities set version = version - 1 where id = $1", [created.json().id]);
      await explainer.query("set local track_functions = 'all'");
      await explainer.query(write?.sql ?? "", [...(write?.parameters ?? [])]);
      const { rows: calls } = await explainer.query(
        "select calls::int as n from pg_stat_xact_user_functions where funcname = 'roster_holds_any'",
      );
      expect(calls[0]?.n).toBe(1);
    } finally {
      await explainer.query("rollback");
    }
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from directory_events
      where data::jsonb->>'id' = ${created.json().id as string} and event = 'user.updated'`.execute(database.db);
    expect(rows[0]?.n).toBe(1);
  });
});
