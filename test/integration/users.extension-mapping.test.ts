import { beforeAll, describe, expect, it } from "vitest";
import { CONTOSO_EXTENSION, CONTOSO_URN, OKTA_EXTENSION, OKTA_URN } from "../helpers/extensions.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";
import { PATCH_OP } from "../helpers/constants.js";

/** The data mapping and webhooks see extension attributes. */
const MAPPING = `{"login": userName, "costCenter": \`${CONTOSO_URN}\`.costCenterCode}`;
const { t } = useTestApp({ recording: true });
let entra: SeededClient;

beforeAll(async () => {
  entra = await seedClient(t, { extensions: [CONTOSO_EXTENSION], mapping: MAPPING });
});

describe("extension attributes in the data mapping and webhooks", () => {
  it("the mapping turns an extension attribute into a trait, on create and on PATCH", async () => {
    const created = await scim(t, entra, "POST", "/Users", {
      userName: "mapped@contoso.example",
      [CONTOSO_URN]: { costCenterCode: "CC-7" },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id;
    expect((await adminCall(t, "GET", `/identities/${id}`)).json().traits).toEqual({
      login: "mapped@contoso.example",
      costCenter: "CC-7",
    });
    await scim(t, entra, "PATCH", `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: `${CONTOSO_URN}:costCenterCode`, value: "CC-8" }],
    });
    expect((await adminCall(t, "GET", `/identities/${id}`)).json().traits.costCenter).toBe("CC-8");
  });

  it(":testMapping validates the user against the client's extensions and shows the trait", async () => {
    const res = await adminCall(t, "POST", `/scimClients/${entra.clientId}:testMapping`, {
      user: { userName: "dry@contoso.example", [CONTOSO_URN]: { costCenterCode: "CC-dry" } },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().traits).toEqual({ login: "dry@contoso.example", costCenter: "CC-dry" });
    const bad = await adminCall(t, "POST", `/scimClients/${entra.clientId}:testMapping`, {
      user: { userName: "dry@contoso.example", [CONTOSO_URN]: { homeSite: { floor: "top" } } },
    });
    expect(bad.statusCode).toBe(400);
  });

  it("the webhook's raw user carries the extension object", async () => {
    await t.recorder.clear();
    const created = await scim(t, entra, "POST", "/Users", {
      userName: "hooked@contoso.example",
      [CONTOSO_URN]: { costCenterCode: "CC-9" },
    });
    const events = await t.recorder.events();
    const event = events.find((e) => e.kind === "user.created" && e.resourceId === created.json().id);
    const raw = event?.data.raw as Record<string, unknown>;
    expect(raw[CONTOSO_URN]).toEqual({ costCenterCode: "CC-9" });
    expect(raw.schemas).toContain(CONTOSO_URN);
  });

  it("another client's webhook raw leaves out extensions it did not declare", async () => {
    const secret = "other-client-secret-1";
    const other = await adminCall(t, "POST", "/scimClients", {
      organization_id: entra.organizationId,
      secret,
      extensions: [OKTA_EXTENSION],
    });
    const okta: SeededClient = {
      ...entra,
      clientId: other.json().client_id,
      secret,
      base: `/scim/${other.json().client_id}/v2`,
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/scim+json" },
    };
    const id = (
      await scim(t, entra, "POST", "/Users", {
        userName: "two@contoso.example",
        [CONTOSO_URN]: { costCenterCode: "C" },
      })
    ).json().id;
    await t.recorder.clear();
    const put = await scim(t, okta, "PUT", `/Users/${id}`, {
      userName: "two@contoso.example",
      [OKTA_URN]: { costCode: "O" },
    });
    expect(put.statusCode, put.body).toBe(200);
    const [event] = (await t.recorder.events()).filter((e) => e.kind === "user.updated");
    const raw = event?.data.raw as Record<string, unknown>;
    expect(raw[OKTA_URN]).toEqual({ costCode: "O" });
    expect(raw[CONTOSO_URN]).toBeUndefined();
    expect(raw.schemas).not.toContain(CONTOSO_URN);
    // The user keeps both; each client reads its own.
    expect((await scim(t, entra, "GET", `/Users/${id}`)).json()[CONTOSO_URN]).toEqual({ costCenterCode: "C" });
  });
});
