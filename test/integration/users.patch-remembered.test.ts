import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { useTestApp } from "../helpers/suite.js";
import type { RecordingSink } from "../helpers/events.js";
import { idpBody } from "../helpers/idp-fixtures.js";
import { ENTERPRISE_SCHEMA, PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { scim } from "../helpers/seed.js";

/**
 * A PATCH runs on the document the instance remembers from its last write of the user and is written with
 * the row-version guard in one round trip; an instance that remembers nothing reads the row first. Both must give
 * the same answer, the same stored document and the same events, for every PATCH fixture and IdP PATCH body.
 * `warm` creates every user (so it remembers them); `cold` is a second instance on the same database that never saw
 * them.
 */

const {
  t: warm,
  second: cold,
  c,
} = useTestApp({ queries: true, recording: true, secondInstance: { recording: true }, seed: true });

interface Case {
  readonly name: string;
  readonly current: Record<string, unknown>;
  readonly body: unknown;
}

const patchCases = (): Case[] => {
  const { cases } = JSON.parse(readFileSync(new URL("../fixtures/patch-cases.json", import.meta.url), "utf8")) as {
    cases: { name: string; resource: string; current: Record<string, unknown>; operations: unknown[] }[];
  };
  return cases
    .filter((x) => x.resource === "User")
    .map((x) => {
      const { id: _id, meta: _meta, ...current } = x.current;
      return { name: x.name, current, body: { schemas: [PATCH_OP], Operations: x.operations } };
    });
};

const IDP_USER = {
  schemas: [USER_SCHEMA, ENTERPRISE_SCHEMA],
  userName: "idp.user@example.com",
  displayName: "Idp User",
  active: true,
  name: { givenName: "Idp", familyName: "User" },
  emails: [{ value: "idp.user@example.com", type: "work", primary: true }],
  phoneNumbers: [{ value: "+1 555 0100", type: "mobile" }],
  [ENTERPRISE_SCHEMA]: { department: "Sales", employeeNumber: "E-1" },
};
const idpCases = (): Case[] =>
  readdirSync(new URL("../fixtures/idp/", import.meta.url))
    .filter((f) => /-patch-/.test(f) && !f.includes("-group-") && f.endsWith(".json"))
    .map((f) => f.replace(/\.json$/, ""))
    .map((name) => ({
      name,
      current: IDP_USER,
      body: idpBody(name, { costCenterCode: "CC-1", employeeBadge: "B-1" }),
    }));

/** What one PATCH of a fresh user yields, ids and times left out. */
async function outcome(patcher: TestApp, recorder: RecordingSink, x: Case) {
  const created = await scim(warm, c, "POST", "/Users", x.current);
  if (created.statusCode !== 201) return { created: created.statusCode };
  const id = created.json().id as string;
  await recorder.clear();
  warm.queries.reset();
  const res = await scim(patcher, c, "PATCH", `/Users/${id}`, x.body);
  const statements = warm.queries.mentioning("identities");
  const stored = (await scim(cold, c, "GET", `/Users/${id}`)).body;
  const events = await recorder.events();
  await scim(warm, c, "DELETE", `/Users/${id}`);
  const anonymous = (text: string) =>
    JSON.parse(text.replaceAll(id, "<id>").replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, "<time>"));
  return {
    outcome: {
      status: res.statusCode,
      body: anonymous(res.body),
      stored: anonymous(stored),
      events: events.map((e) => anonymous(JSON.stringify(e))),
    },
    statements,
  };
}

describe("PATCH on the remembered document (one round trip) and on a read one", () => {
  const cases = [...patchCases(), ...idpCases()];

  it("has fixtures to compare", () => {
    expect(cases.length).toBeGreaterThan(60);
  });

  it.each(cases.map((x) => [x.name, x] as const))("%s", async (_name, x) => {
    const remembered = await outcome(warm, warm.recorder, x);
    const read = await outcome(cold, cold.recorder, x);
    expect(remembered).not.toHaveProperty("created");
    expect(remembered.outcome).toEqual(read.outcome);
  });

  it("Okta's deactivation is one statement on the remembered document, two without", async () => {
    const x = idpCases().find((y) => y.name === "okta-patch-deactivate");
    if (x === undefined) throw new Error("fixture missing");
    const remembered = await outcome(warm, warm.recorder, x);
    expect(remembered.outcome?.status).toBe(200);
    expect(remembered.statements).toBe(1);
    // The cold instance's statements do not pass the spy; the warm one forgetting the user reads it first.
    const created = await scim(warm, c, "POST", "/Users", x.current);
    const id = created.json().id as string;
    await scim(cold, c, "PATCH", `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "title", value: "t" }],
    });
    warm.queries.reset();
    const res = await scim(warm, c, "PATCH", `/Users/${id}`, x.body);
    expect(res.statusCode).toBe(200);
    expect(res.json().active).toBe(false);
    expect(res.json().title).toBe("t");
    // The remembered version was outdated by the other instance: the guarded write missed, then read and wrote.
    expect(warm.queries.mentioning("identities")).toBe(3);
  });
});
