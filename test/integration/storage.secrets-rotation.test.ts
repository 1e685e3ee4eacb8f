import { describe, expect, it } from "vitest";
import { resealWebhookSecrets } from "../../src/directory/scim-clients/reseal.js";
import { ScimClientRepo } from "../../src/directory/scim-clients/repo.js";
import { RetiredWebhookRepo } from "../../src/directory/scim-clients/retired-repo.js";
import { SetupLinkRepo } from "../../src/directory/setup-links/repo.js";
import { ManualClock } from "../../src/platform/clock.js";
import { SecretBox } from "../../src/platform/crypto.js";
import { createLogger } from "../../src/platform/logger.js";
import { verifyWebhookSignature } from "../../src/webhooks/verify.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { adminCall, scim, seedClient } from "../helpers/seed.js";
import { connectThroughLink, openSetupLink, setupLinkFor } from "../helpers/setup-links.js";
import { testWebhooks } from "../helpers/webhooks.js";
import { useTestApp } from "../helpers/suite.js";
import { USER_SCHEMA } from "../helpers/constants.js";

const OLD = Buffer.from("old-roster-secret-key-0123456789abcdef");
const NEW = Buffer.from("new-roster-secret-key-0123456789abcdef");
const WEBHOOK_SECRET = "whsec_rotation_test_0123456789";
const silent = createLogger("silent");

const clock = new ManualClock(Date.now());
const { database, receiver } = useTestApp({ app: false, hooks: true });

/** One Roster process's view: the same database, started with the given ROSTER_SECRETS. */
async function instance(secrets: Buffer[]) {
  const webhooks = testWebhooks(database.db, clock, { box: new SecretBox(secrets) });
  const t = await createTestApp({ database, clock, secrets, extra: { webhooks } });
  return { t, webhooks };
}

const sealedOf = async (t: TestApp, clientId: string) =>
  (
    await t.db
      .selectFrom("scim_clients")
      .select("webhook_secret_sealed")
      .where("client_id", "=", clientId)
      .executeTakeFirstOrThrow()
  ).webhook_secret_sealed ?? "";

describe("webhook secrets at rest", () => {
  it.each([
    ["on create", "short-secret"],
    ["one character short", "a".repeat(15)],
  ])("a webhook secret shorter than 16 characters is refused with 400 (%s)", async (_n, secret) => {
    const { t } = await instance([OLD]);
    try {
      const org = (await adminCall(t, "POST", "/organizations", { name: "S" })).json().id;
      const res = await adminCall(t, "POST", "/scimClients", {
        organization_id: org,
        webhook: { url: receiver.url, secret },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({
        status: "INVALID_ARGUMENT",
        message: "webhook.secret must be at least 16 characters",
      });
      expect(res.body).not.toContain(secret);
      const ok = await adminCall(t, "POST", "/scimClients", { organization_id: org, webhook: { url: receiver.url } });
      const patched = await adminCall(t, "PATCH", `/scimClients/${ok.json().client_id}?update_mask=webhook.secret`, {
        webhook: { secret },
      });
      expect(patched.statusCode).toBe(400);
      const exact = await adminCall(t, "PATCH", `/scimClients/${ok.json().client_id}?update_mask=webhook.secret`, {
        webhook: { secret: "a".repeat(16) },
      });
      expect(exact.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it("ROSTER_SECRETS rotation: add a key in front, restart, old secrets re-sealed in the background, old key removable", async () => {
    // 1. Running with the old key only.
    const before = await instance([OLD]);
    const c = await seedClient(before.t, { webhook: { url: receiver.url, secret: WEBHOOK_SECRET } });
    const legacy = await sealedOf(before.t, c.clientId);
    expect(legacy.startsWith(new SecretBox([OLD]).primaryPrefix)).toBe(true);
    // A connection deleted before its events were delivered keeps its endpoint, sealed with the old key, until then.
    const gone = await seedClient(before.t, { webhook: { url: receiver.url, secret: WEBHOOK_SECRET } });
    expect((await adminCall(before.t, "DELETE", `/scimClients/${gone.clientId}`)).statusCode).toBe(200);
    const retired = () =>
      database.db.selectFrom("retired_webhooks").select("webhook_secret_sealed").where("client_id", "=", gone.clientId);
    expect(
      (await retired().executeTakeFirstOrThrow()).webhook_secret_sealed?.startsWith(new SecretBox([OLD]).primaryPrefix),
    ).toBe(true);
    // A setup link keeps the webhook it hands its connections, sealed with the old key too.
    const link = await setupLinkFor(before.t, c.organizationId, {
      webhook: { url: receiver.url, secret: WEBHOOK_SECRET },
    });
    const linkSealed = async () =>
      (
        await database.db
          .selectFrom("setup_links")
          .select("webhook_secret_sealed")
          .where("id", "=", link.id)
          .executeTakeFirstOrThrow()
      ).webhook_secret_sealed ?? "";
    expect((await linkSealed()).startsWith(new SecretBox([OLD]).primaryPrefix)).toBe(true);
    await before.t.close();

    // 2. Restart with the new key in front: new values use it, old ones still open, the resealer moves them.
    const during = await instance([NEW, OLD]);
    expect(new SecretBox([NEW, OLD]).open(legacy)).toBe(WEBHOOK_SECRET);
    // Every secret of the database sealed with the old key (this client's and earlier tests') moves.
    const reseal = () =>
      resealWebhookSecrets(
        new ScimClientRepo(database.db),
        new SecretBox([NEW, OLD]),
        silent,
        new RetiredWebhookRepo(database.db),
        new SetupLinkRepo(database.db),
      );
    const first = await reseal();
    expect(first.unreadable).toBe(0);
    expect(first.resealed).toBeGreaterThanOrEqual(3);
    expect((await linkSealed()).startsWith(new SecretBox([NEW]).primaryPrefix)).toBe(true);
    const moved = await sealedOf(during.t, c.clientId);
    expect(moved.startsWith(new SecretBox([NEW]).primaryPrefix)).toBe(true);
    expect(
      (await retired().executeTakeFirstOrThrow()).webhook_secret_sealed?.startsWith(new SecretBox([NEW]).primaryPrefix),
    ).toBe(true);
    expect(await reseal()).toEqual({ resealed: 0, unreadable: 0 });
    await during.t.close();

    // 3. Restart without the old key: deliveries are still signed with the same webhook secret.
    const after = await instance([NEW]);
    try {
      receiver.reset();
      const created = await scim(after.t, c, "POST", "/Users", {
        schemas: [USER_SCHEMA],
        userName: "rotated@example.com",
      });
      expect(created.statusCode).toBe(201);
      // A connection made through the link now: it starts with the link's re-sealed webhook.
      const session = await openSetupLink(after.t, link.url);
      const { client: linked } = await connectThroughLink(after.t, c.organizationId, session);
      receiver.knows("all");
      await after.webhooks.dispatcher.drain();
      // The live connections' events and the deleted one's owed events, all signed with the same secret.
      const ours = [c.clientId, gone.clientId, linked.clientId];
      const mine = receiver.received.filter((r) => ours.includes(String(r.json.directory_id)));
      expect(mine.filter((r) => r.json.directory_id === linked.clientId).map((r) => r.json.event)).toEqual([
        "connection.created",
      ]);
      expect(mine.filter((r) => r.json.directory_id === gone.clientId).map((r) => r.json.event)).toEqual([
        "connection.created",
        "connection.deleted",
      ]);
      expect(mine.filter((r) => r.json.event === "user.created").map((r) => r.json.directory_id)).toEqual([c.clientId]);
      for (const got of mine) {
        const header = String(got.headers["service-signature"]);
        expect(verifyWebhookSignature(WEBHOOK_SECRET, header, got.rawBody, { now: clock.now() })).toBe(true);
      }
      expect(await retired().executeTakeFirst()).toBeUndefined();
      expect((await adminCall(after.t, "GET", `/scimClients/${c.clientId}`)).json().webhook.secret_set).toBe(true);
    } finally {
      receiver.knows("directory");
      await after.t.close();
    }
  });

  it("a value sealed with a removed key is reported, never overwritten", async () => {
    const before = await instance([OLD]);
    const c = await seedClient(before.t, { webhook: { url: receiver.url, secret: WEBHOOK_SECRET } });
    const sealed = await sealedOf(before.t, c.clientId);
    await before.t.close();
    const outcome = await resealWebhookSecrets(new ScimClientRepo(database.db), new SecretBox([NEW]), silent);
    expect(outcome.unreadable).toBeGreaterThanOrEqual(1);
    const { t } = await instance([NEW]);
    try {
      expect(await sealedOf(t, c.clientId)).toBe(sealed);
    } finally {
      await t.close();
    }
  });
});
