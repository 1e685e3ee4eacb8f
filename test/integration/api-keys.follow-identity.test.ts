import { describe, expect, it } from "vitest";
import { rawKey } from "../helpers/api-keys.js";
import type { TestApp } from "../helpers/app.js";
import { adminCall, type SeededClient, scim, seedClient } from "../helpers/seed.js";
import { PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

// A second instance of Roster on the same database, with its own process-local state.
const { t: a, second: b } = useTestApp({ secondInstance: true });

let seq = 0;
async function createUser(t: TestApp, c: SeededClient): Promise<string> {
  seq += 1;
  const res = await scim(t, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: `person-${seq}@example.com` });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

const setActive = async (t: TestApp, c: SeededClient, id: string, active: boolean) => {
  const res = await scim(t, c, "PATCH", `/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: "replace", path: "active", value: active }],
  });
  expect(res.statusCode, res.body).toBe(200);
};

/** One issued and one imported key acting for `actorId` in the client's organization; returns their secrets. */
async function keysFor(t: TestApp, c: SeededClient, actorId: string, organizationId = c.organizationId) {
  const issued = await adminCall(t, "POST", "/issuedApiKeys", {
    name: "laptop",
    organization_id: organizationId,
    actor_id: actorId,
  });
  expect(issued.statusCode, issued.body).toBe(201);
  seq += 1;
  const raw = rawKey(`follow-${seq}-${Math.random().toString(36).slice(2)}`);
  const imported = await adminCall(t, "POST", "/importedApiKeys:batchCreate", {
    requests: [{ raw_key: raw, name: "legacy", organization_id: organizationId, actor_id: actorId }],
  });
  expect(imported.statusCode, imported.body).toBe(200);
  return {
    issued: { id: issued.json().key_id as string, secret: issued.json().secret as string },
    imported: { id: imported.json().results[0].imported_api_key.key_id as string, secret: raw },
  };
}

/** A fresh organization with two people in it, ada and bob, each holding an issued and an imported key. */
async function twoPeopleWithKeys() {
  const c = await seedClient(a);
  const ada = await createUser(a, c);
  const bob = await createUser(a, c);
  return { c, ada, bob, adaKeys: await keysFor(a, c, ada), bobKeys: await keysFor(a, c, bob) };
}

async function verify(t: TestApp, key: string): Promise<Record<string, unknown>> {
  const res = await adminCall(t, "POST", "/apiKeys:verify", { key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe("keys follow their person: deactivation suspends", () => {
  it("an IdP deactivates a user: that user's issued and imported keys are ACTOR_INACTIVE in the very next request, others' keys are not", async () => {
    const { c, ada, adaKeys, bobKeys } = await twoPeopleWithKeys();
    expect(await verify(a, adaKeys.issued.secret)).toMatchObject({ valid: true });

    await setActive(a, c, ada, false);

    for (const key of [adaKeys.issued, adaKeys.imported]) {
      expect(await verify(a, key.secret)).toEqual({ valid: false, reason: "ACTOR_INACTIVE", key_id: key.id });
    }
    for (const key of [bobKeys.issued, bobKeys.imported])
      expect(await verify(a, key.secret)).toMatchObject({ valid: true });

    const issued = (await adminCall(a, "GET", `/issuedApiKeys/${adaKeys.issued.id}`)).json();
    expect(issued).toMatchObject({ state: "SUSPENDED", suspend_reason: "ACTOR_INACTIVE", revoke_time: null });
    const imported = (await adminCall(a, "GET", `/importedApiKeys/${adaKeys.imported.id}`)).json();
    expect(imported).toMatchObject({ state: "SUSPENDED", suspend_reason: "ACTOR_INACTIVE" });
    const listed = (await adminCall(a, "GET", `/issuedApiKeys?actor_id=${ada}`)).json().issued_api_keys;
    expect(listed.map((k: Record<string, unknown>) => k.state)).toEqual(["SUSPENDED"]);
    const bobIssued = (await adminCall(a, "GET", `/issuedApiKeys/${bobKeys.issued.id}`)).json();
    expect(bobIssued.state).toBe("ACTIVE");
    expect(bobIssued).not.toHaveProperty("suspend_reason");
  });

  it("re-activation restores the keys with no admin action", async () => {
    const c = await seedClient(a);
    const ada = await createUser(a, c);
    const keys = await keysFor(a, c, ada);
    await setActive(a, c, ada, false);
    expect(await verify(a, keys.issued.secret)).toMatchObject({ valid: false, reason: "ACTOR_INACTIVE" });

    await setActive(a, c, ada, true);

    for (const key of [keys.issued, keys.imported]) expect(await verify(a, key.secret)).toMatchObject({ valid: true });
    expect((await adminCall(a, "GET", `/issuedApiKeys/${keys.issued.id}`)).json().state).toBe("ACTIVE");
  });

  it("a PUT without active (which re-enables the user, RFC 7643) restores the keys too", async () => {
    const c = await seedClient(a);
    const ada = await createUser(a, c);
    const keys = await keysFor(a, c, ada);
    await setActive(a, c, ada, false);
    const put = await scim(a, c, "PUT", `/Users/${ada}`, {
      schemas: [USER_SCHEMA],
      userName: `renamed-${ada}@example.com`,
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(await verify(a, keys.issued.secret)).toMatchObject({ valid: true });
  });

  it("a key whose actor is an identity of another organization, or that has no organization, is unaffected", async () => {
    const c = await seedClient(a);
    const other = await seedClient(a);
    const ada = await createUser(a, c);
    const foreign = await keysFor(a, other, ada, other.organizationId);
    const orgless = await adminCall(a, "POST", "/issuedApiKeys", { name: "no org", actor_id: ada });
    await setActive(a, c, ada, false);
    expect(await verify(a, foreign.issued.secret)).toMatchObject({ valid: true });
    expect(await verify(a, foreign.imported.secret)).toMatchObject({ valid: true });
    expect(await verify(a, orgless.json().secret)).toMatchObject({ valid: true });
  });

  it("a suspended key is not counted against its rate limit", async () => {
    const c = await seedClient(a);
    const ada = await createUser(a, c);
    const key = await adminCall(a, "POST", "/issuedApiKeys", {
      name: "limited",
      organization_id: c.organizationId,
      actor_id: ada,
      rate_limits: [{ limit: 1, period: "86400s" }],
    });
    await setActive(a, c, ada, false);
    for (let i = 0; i < 3; i++) {
      expect(await verify(a, key.json().secret)).toMatchObject({ reason: "ACTOR_INACTIVE" });
    }
    await setActive(a, c, ada, true);
    expect(await verify(a, key.json().secret)).toMatchObject({ valid: true, rate_limit: { remaining: 0 } });
  });
});

describe("keys follow their person: deletion revokes", () => {
  it("deleting the user revokes its keys for good (ACTOR_DELETED); other users' keys are unaffected", async () => {
    const { c, ada, bob, adaKeys, bobKeys } = await twoPeopleWithKeys();

    const del = await scim(a, c, "DELETE", `/Users/${ada}`);
    expect(del.statusCode).toBe(204);

    for (const key of [adaKeys.issued, adaKeys.imported]) {
      expect(await verify(a, key.secret)).toEqual({
        valid: false,
        reason: "REVOKED",
        key_id: key.id,
        revoke_reason: "ACTOR_DELETED",
      });
    }
    const got = (await adminCall(a, "GET", `/issuedApiKeys/${adaKeys.issued.id}`)).json();
    expect(got).toMatchObject({ state: "REVOKED", revoke_reason: "ACTOR_DELETED" });
    expect(got.revoke_time).not.toBeNull();
    for (const key of [bobKeys.issued, bobKeys.imported])
      expect(await verify(a, key.secret)).toMatchObject({ valid: true });

    // Never comes back: not by a new user of the same name, not by PATCH, not by rotation.
    const again = await scim(a, c, "POST", "/Users", { schemas: [USER_SCHEMA], userName: "whoever@example.com" });
    expect(again.statusCode).toBe(201);
    expect(await verify(a, adaKeys.issued.secret)).toMatchObject({ valid: false, reason: "REVOKED" });
    const patch = await adminCall(a, "PATCH", `/issuedApiKeys/${adaKeys.issued.id}?update_mask=actor_id`, {
      issued_api_key: { actor_id: bob },
    });
    expect(patch.statusCode).toBe(412);
    const rotate = await adminCall(a, "POST", `/issuedApiKeys/${adaKeys.issued.id}:rotate`, {});
    expect(rotate.statusCode).toBe(412);
  });

  it("deleting the whole organization deletes its keys and identities together", async () => {
    const c = await seedClient(a);
    const ada = await createUser(a, c);
    const keys = await keysFor(a, c, ada);
    const del = await adminCall(a, "DELETE", `/organizations/${c.organizationId}`);
    expect(del.statusCode, del.body).toBe(200);
    expect((await adminCall(a, "GET", `/issuedApiKeys/${keys.issued.id}`)).statusCode).toBe(404);
    expect(await verify(a, keys.imported.secret)).toEqual({ valid: false, reason: "NOT_FOUND" });
  });

  it("an admin DELETE says revoke_reason ADMIN", async () => {
    const c = await seedClient(a);
    const keys = await keysFor(a, c, "svc-billing");
    const res = await adminCall(a, "DELETE", `/issuedApiKeys/${keys.issued.id}`);
    expect(res.json()).toMatchObject({ state: "REVOKED", revoke_reason: "ADMIN" });
  });
});

describe("keys follow their person across instances", () => {
  it("a deactivation or deletion through one instance is seen by the next verification on another", async () => {
    const { c, ada, bob: eve, adaKeys, bobKeys: eveKeys } = await twoPeopleWithKeys();
    // Instance b verifies first, so anything it could cache is warm.
    expect(await verify(b, adaKeys.issued.secret)).toMatchObject({ valid: true });
    expect(await verify(b, eveKeys.imported.secret)).toMatchObject({ valid: true });

    await setActive(a, c, ada, false);
    expect(await verify(b, adaKeys.issued.secret)).toMatchObject({ valid: false, reason: "ACTOR_INACTIVE" });
    expect(await verify(b, adaKeys.imported.secret)).toMatchObject({ valid: false, reason: "ACTOR_INACTIVE" });

    await setActive(b, c, ada, true);
    expect(await verify(a, adaKeys.issued.secret)).toMatchObject({ valid: true });

    expect((await scim(a, c, "DELETE", `/Users/${eve}`)).statusCode).toBe(204);
    expect(await verify(b, eveKeys.imported.secret)).toMatchObject({ valid: false, reason: "REVOKED" });
    expect(await verify(b, eveKeys.issued.secret)).toMatchObject({ valid: false, reason: "REVOKED" });
  });
});

describe("keys_follow_identity off", () => {
  it("keys stay valid through deactivation and deletion when the organization turns it off", async () => {
    const c = await seedClient(a);
    const org = (await adminCall(a, "GET", `/organizations/${c.organizationId}`)).json();
    expect(org.keys_follow_identity).toBe(true);
    const off = await adminCall(a, "PATCH", `/organizations/${c.organizationId}`, { keys_follow_identity: false });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json()).toMatchObject({ keys_follow_identity: false, name: org.name });

    const ada = await createUser(a, c);
    const keys = await keysFor(a, c, ada);
    await setActive(a, c, ada, false);
    expect(await verify(a, keys.issued.secret)).toMatchObject({ valid: true });
    expect((await adminCall(a, "GET", `/issuedApiKeys/${keys.issued.id}`)).json().state).toBe("ACTIVE");

    expect((await scim(a, c, "DELETE", `/Users/${ada}`)).statusCode).toBe(204);
    expect(await verify(a, keys.issued.secret)).toMatchObject({ valid: true });
    expect(await verify(a, keys.imported.secret)).toMatchObject({ valid: true });
  });

  it("can be off from creation, and a bad value is refused", async () => {
    const created = await adminCall(a, "POST", "/organizations", { name: "NoFollow", keys_follow_identity: false });
    expect(created.json()).toMatchObject({ keys_follow_identity: false });
    const bad = await adminCall(a, "PATCH", `/organizations/${created.json().id}`, { keys_follow_identity: "no" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.status).toBe("INVALID_ARGUMENT");
  });
});
