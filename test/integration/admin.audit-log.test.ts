import { expect, it } from "vitest";
import { createIssuedKey } from "../helpers/api-keys.js";
import { useTestApp } from "../helpers/suite.js";
import { adminCall, seedClient } from "../helpers/seed.js";

const o = useTestApp({ observed: true });

async function auditOf(target: string): Promise<Array<Record<string, unknown>>> {
  const res = await adminCall(o.t, "GET", `/auditLog?target=${encodeURIComponent(target)}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().entries;
}

it("records a SCIM secret rotation: actor, action, target and field names, never the secret", async () => {
  const c = await seedClient(o.t);
  const rotated = "rotated-scim-secret-0123456789";
  const webhookSecret = "whsec_rotated_0123456789";
  const res = await adminCall(o.t, "PATCH", `/scimClients/${c.clientId}?update_mask=secret,webhook`, {
    secret: rotated,
    webhook: { url: "https://hooks.example.com/roster", secret: webhookSecret },
  });
  expect(res.statusCode, res.body).toBe(200);

  const entries = await auditOf(`scimClients/${c.clientId}`);
  expect(entries.map((e) => e.action)).toEqual(["scimClients.update", "scimClients.create"]);
  expect(entries[0]).toMatchObject({
    actor: { id: "bootstrap" },
    target: `scimClients/${c.clientId}`,
    changed_fields: ["secret", "webhook"],
    status: 200,
  });
  expect(entries[1]?.changed_fields).toEqual(["organization_id", "secret"]);
  const all = await adminCall(o.t, "GET", "/auditLog?page_size=1000");
  expect(all.body).not.toContain(rotated);
  expect(all.body).not.toContain(webhookSecret);
  expect(all.body).not.toContain(c.secret);
});

it("records organizations, key rotations and deletions, newest first in pages; reads and refusals are not changes", async () => {
  const org = await adminCall(o.t, "POST", "/organizations", { name: "Audited" });
  const orgId = org.json().id as string;
  const key = await createIssuedKey(o.t);
  const rotate = await adminCall(o.t, "POST", `/issuedApiKeys/${key.key_id as string}:rotate`, {});
  expect(rotate.statusCode, rotate.body).toBe(200);
  await adminCall(o.t, "GET", `/organizations/${orgId}`);
  await adminCall(o.t, "POST", "/organizations", {});
  expect((await adminCall(o.t, "POST", "/apiKeys:verify", { key: key.secret })).statusCode).toBe(200);
  await adminCall(o.t, "DELETE", `/organizations/${orgId}`);

  expect((await auditOf(`organizations/${orgId}`)).map((e) => e.action)).toEqual([
    "organizations.delete",
    "organizations.create",
  ]);
  const keyEntries = await auditOf(`issuedApiKeys/${key.key_id as string}`);
  expect(keyEntries.map((e) => e.action)).toEqual(["issuedApiKeys.rotate", "issuedApiKeys.create"]);

  const page1 = (await adminCall(o.t, "GET", "/auditLog?page_size=2")).json();
  expect(page1.entries).toHaveLength(2);
  expect(page1.entries[0].action).toBe("organizations.delete");
  const page2 = (await adminCall(o.t, "GET", `/auditLog?page_size=2&page_token=${page1.next_page_token}`)).json();
  expect(page2.entries[0].id < page1.entries[1].id).toBe(true);
  const everything = await adminCall(o.t, "GET", "/auditLog?page_size=1000");
  expect(everything.body).not.toContain(String(key.secret));
  expect(everything.body).not.toContain(String(rotate.json().secret));
  expect(everything.json().entries.some((e: { action: string }) => e.action === "apiKeys.verify")).toBe(false);
});
