import { connect } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventSink } from "../../src/directory/events.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { createGroup } from "../helpers/groups.js";
import { scim, seedClient } from "../helpers/seed.js";
import { ENTERPRISE_SCHEMA, ERROR_SCHEMA, PATCH_OP } from "../helpers/constants.js";
import { useTestApp } from "../helpers/suite.js";

/** Protocol details third-party suites and RFCs check: routing before parsing, challenges, 204s, errors' format. */
const { t, c } = useTestApp({ seed: true });

const expectScimError = (
  res: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  status: number,
) => {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers["content-type"])).toMatch(/^application\/scim\+json/);
  const body = res.json() as { schemas: string[]; status: string; detail?: string; scimType?: string };
  expect(body).toMatchObject({ schemas: [ERROR_SCHEMA], status: String(status) });
  return body;
};

describe("the route and method are resolved before the body is read", () => {
  it.each([
    ["POST /Schemas with an undecodable body", "POST", "/Schemas", "{not json", "application/scim+json", 405],
    ["PUT /ServiceProviderConfig with a text body", "PUT", "/ServiceProviderConfig", "hello", "text/plain", 405],
    ["DELETE /Users with a broken JSON body", "DELETE", "/Users", "{", "application/json", 405],
    ["POST to an unknown route with an undecodable body", "POST", "/Nope", "{not json", "application/scim+json", 404],
    ["PATCH an unknown route with a body of another type", "PATCH", "/Nope/1", "<xml/>", "application/xml", 404],
    ["POST /Bulk", "POST", "/Bulk", "{", "application/scim+json", 404],
  ])("%s: %s", async (_name, method, path, payload, type, status) => {
    const res = await t.request({
      method: method as "POST",
      url: `${c.base}${path}`,
      headers: { authorization: `Bearer ${c.secret}`, "content-type": type },
      payload,
    });
    expectScimError(res, status);
    if (status === 405) expect(res.headers.allow).toBeDefined();
  });

  it("still authenticates first: an unknown route without credentials is 401", async () => {
    const res = await t.request({
      method: "POST",
      url: `${c.base}/Nope`,
      payload: "{",
      headers: { "content-type": "application/json" },
    });
    expectScimError(res, 401);
  });
});

describe("every SCIM 401 carries a WWW-Authenticate challenge (RFC 6750 §3)", () => {
  it.each([
    ["no Authorization header", {}],
    ["a wrong secret", { authorization: "Bearer wrong" }],
    ["an empty bearer", { authorization: "Bearer" }],
  ])("%s", async (_name, headers) => {
    const res = await t.request({ method: "GET", url: `${c.base}/Users`, headers });
    expectScimError(res, 401);
    expect(res.headers["www-authenticate"]).toBe('Bearer realm="scim"');
  });
});

describe("a 204 has no content type", () => {
  it.each([
    [
      "DELETE /Users/{id}",
      async () =>
        `/Users/${(await scim(t, c, "POST", "/Users", { userName: `gone${Math.random()}@x.test` })).json().id}`,
    ],
    ["DELETE /Groups/{id}", async () => `/Groups/${(await createGroup(t, c, `gone ${Math.random()}`)).id}`],
  ])("%s", async (_name, make) => {
    const res = await scim(t, c, "DELETE", await make());
    expect(res.statusCode).toBe(204);
    expect(res.headers["content-type"]).toBeUndefined();
    expect(res.body).toBe("");
  });
});

describe("a group without members leaves members out, as users leave out empty multi-valued attributes", () => {
  it.each([
    ["POST", async (id: string) => scim(t, c, "PUT", `/Groups/${id}`, { displayName: "Empty" }), undefined],
    ["GET", async (id: string) => scim(t, c, "GET", `/Groups/${id}`), undefined],
    ["GET ?attributes=members", async (id: string) => scim(t, c, "GET", `/Groups/${id}?attributes=members`), []],
    [
      "GET ?attributes=members.value",
      async (id: string) => scim(t, c, "GET", `/Groups/${id}?attributes=members.value`),
      [],
    ],
    [
      "GET ?attributes=displayName",
      async (id: string) => scim(t, c, "GET", `/Groups/${id}?attributes=displayName`),
      undefined,
    ],
    [
      "PATCH removing the last member (answered with the group as a projection is asked for)",
      async (id: string) => {
        const user = (await scim(t, c, "POST", "/Users", { userName: `m${Math.random()}@x.test` })).json().id;
        await scim(t, c, "PATCH", `/Groups/${id}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: "add", path: "members", value: [{ value: user }] }],
        });
        return scim(t, c, "PATCH", `/Groups/${id}?excludedAttributes=externalId`, {
          schemas: [PATCH_OP],
          Operations: [{ op: "remove", path: "members" }],
        });
      },
      undefined,
    ],
  ])("%s", async (_name, read, members) => {
    const group = await createGroup(t, c, `Empty ${Math.random()}`);
    expect("members" in group).toBe(false);
    const res = await read(group.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().members).toEqual(members);
  });

  it("a list shows members only on the groups that have some", async () => {
    const user = (await scim(t, c, "POST", "/Users", { userName: "listed@x.test" })).json().id;
    await createGroup(t, c, "L-with", { members: [{ value: user }] });
    await createGroup(t, c, "L-without");
    const page = (await scim(t, c, "GET", `/Groups?filter=${encodeURIComponent('displayName eq "L-with"')}`)).json();
    expect(page.Resources[0].members).toHaveLength(1);
    const empty = (
      await scim(t, c, "GET", `/Groups?filter=${encodeURIComponent('displayName eq "L-without"')}`)
    ).json();
    expect("members" in empty.Resources[0]).toBe(false);
  });
});

describe("PATCH of a whole extension and its errors", () => {
  it.each([
    [
      "path is the extension URN",
      { op: "add", path: ENTERPRISE_SCHEMA, value: { schemas: [ENTERPRISE_SCHEMA], department: "R&D" } },
    ],
    [
      "pathless, keyed by the URN",
      { op: "replace", value: { [ENTERPRISE_SCHEMA]: { schemas: [ENTERPRISE_SCHEMA], department: "R&D" } } },
    ],
  ])("a `schemas` key inside the value is ignored: %s", async (_name, operation) => {
    const user = (await scim(t, c, "POST", "/Users", { userName: `ext${Math.random()}@x.test` })).json().id;
    const res = await scim(t, c, "PATCH", `/Users/${user}`, { schemas: [PATCH_OP], Operations: [operation] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()[ENTERPRISE_SCHEMA]).toEqual({ department: "R&D" });
  });

  it("an unknown key in the extension's value is named as the client sent it, not as a made-up path", async () => {
    const user = (await scim(t, c, "POST", "/Users", { userName: "ext-unknown@x.test" })).json().id;
    const res = await scim(t, c, "PATCH", `/Users/${user}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "add", path: ENTERPRISE_SCHEMA, value: { shoeSize: 44 } }],
    });
    const body = expectScimError(res, 400);
    expect(body.scimType).toBe("invalidPath");
    expect(body.detail).toContain('"shoeSize"');
    expect(body.detail).not.toContain(`${ENTERPRISE_SCHEMA}:shoeSize`);
  });
});

describe("answers the router or Node's parser makes are SCIM Errors under /scim/", () => {
  it.each([
    ["a bad percent-encoding", `/Users/%zz`, 400],
    ["a bad percent-encoding in the client id", "/scim/%E0%A4%A/v2/Users", 400],
    ["an id over 100 characters", `/Users/${"a".repeat(101)}`, 404],
    ["a client id over 100 characters", `/scim/${"c".repeat(150)}/v2/Users`, 404],
    ["a path under /scim/ outside any client", "/scim/just-this", 404],
  ])("%s: %s", async (_name, path, status) => {
    const url = path.startsWith("/scim/") ? path : `${c.base}${path}`;
    const res = await t.request({ method: "GET", url, headers: { authorization: `Bearer ${c.secret}` } });
    expectScimError(res, status);
  });

  describe("over a real socket", () => {
    let port = 0;
    beforeAll(async () => {
      await t.app.listen({ host: "127.0.0.1", port: 0 });
      const address = t.app.server.address();
      port = typeof address === "object" && address !== null ? address.port : 0;
    });

    const raw = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: "127.0.0.1", port });
        const chunks: Buffer[] = [];
        socket.on("data", (d) => chunks.push(d));
        socket.on("error", () => undefined);
        socket.on("close", () =>
          chunks.length === 0 ? reject(new Error("dropped")) : resolve(Buffer.concat(chunks).toString()),
        );
        socket.write(text);
      });
    const parse = (answer: string) => {
      const [head = "", body = ""] = answer.split("\r\n\r\n");
      return { status: Number(head.slice(9, 12)), head, body: JSON.parse(body) };
    };

    it.each([
      [
        "a URL over 16 KiB: 414",
        `GET /scim/any/v2/Users?filter=${"a".repeat(17 * 1024)} HTTP/1.1\r\nhost: x\r\n\r\n`,
        414,
      ],
      [
        "headers over 16 KiB: 431",
        `GET /scim/any/v2/Users HTTP/1.1\r\nhost: x\r\nx-big: ${"b".repeat(17 * 1024)}\r\n\r\n`,
        431,
      ],
      ["a header with a bare CR: 400", "GET /scim/any/v2/Users HTTP/1.1\r\nhost: x\r\nx-a: a\rb\r\n\r\n", 400],
    ])("%s", async (_name, request, status) => {
      const answer = parse(await raw(request));
      expect(answer.status).toBe(status);
      expect(answer.head).toMatch(/content-type: application\/scim\+json/i);
      expect(answer.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: String(status) });
    });
  });
});

describe("a 500 logs one line with an error id, and the answer carries the id", () => {
  let broken: TestApp;
  const lines: string[] = [];
  beforeAll(async () => {
    const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(line) });
    // Fails the directory's changes; a connection's own events (its creation by the seed) record nothing.
    const failing: EventSink = {
      batch: (client, events) => {
        if (events.every((e) => e.kind.startsWith("connection."))) {
          const empty = {
            webhook: false,
            rows: [],
            traceparent: null,
            createdAt: new Date(),
            source: "admin" as const,
          };
          return { ...empty, organizationId: client.organizationId, directoryId: client.clientId };
        }
        throw new Error("event sink unavailable");
      },
      committed: () => {},
    };
    broken = await createTestApp({ extra: { logger, eventSink: failing } });
  });
  afterAll(async () => broken.close());

  it("POST /Users failing inside the service", async () => {
    const client = await seedClient(broken);
    lines.length = 0;
    const res = await scim(broken, client, "POST", "/Users", { userName: "boom@example.com" });
    const body = expectScimError(res, 500);
    const id = /error id ([0-9a-f]{16})/.exec(body.detail ?? "")?.[1];
    expect(id).toBeDefined();
    expect(body.detail).not.toContain("event sink");
    const logged = lines.filter((l) => l.includes(id ?? "-"));
    expect(logged).toHaveLength(1);
    const entry = JSON.parse(logged[0] ?? "{}");
    expect(entry).toMatchObject({
      level: 50,
      errorId: id,
      method: "POST",
      error: { message: "event sink unavailable" },
    });
    expect(logged[0]).not.toContain("    at ");
  });
});
