import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020Module from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_PREFIX, type AdminRoute, recordAdminRoutes } from "../helpers/admin-routes.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { adminCall, adminHeaders } from "../helpers/seed.js";

/** Every admin route as Fastify registered it (HEAD is Fastify's own twin of a GET). */
const routes: AdminRoute[] = [];

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ extra: recordAdminRoutes(routes, { head: false }) });
});
afterAll(async () => t.close());

type ResponseObject = { content?: Record<string, { schema?: object }> };
type Spec = Parameters<Validator["validate"]>[0];
type Document = { openapi: string; paths: Record<string, Record<string, { requestBody?: { required?: boolean } }>> };

const fetchDocument = async (): Promise<Document> => {
  const res = await t.request({ method: "GET", url: `${ADMIN_PREFIX}/openapi.json`, headers: adminHeaders });
  expect(res.statusCode, res.body).toBe(200);
  expect(String(res.headers["content-type"])).toMatch(/^application\/json/);
  return res.json() as Document;
};

/** The OpenAPI path of a Fastify route: `:keyId([^:/]+)::rotate` is `{keyId}:rotate`. */
const openApiPath = (url: string): string =>
  url
    .replaceAll("::", "\u0000")
    .replace(/:(\w+)(\([^)]*\))?/g, "{$1}")
    .replaceAll("\u0000", ":");

describe("the admin API's OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const document = await fetchDocument();
    expect(document.openapi).toMatch(/^3\.1\./);
    const validator = new Validator();
    const result = await validator.validate(document as unknown as Spec);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    // The validator does refuse: the same document without its required `info` is invalid.
    const { info: _info, ...withoutInfo } = document as unknown as Record<string, unknown>;
    expect((await new Validator().validate(withoutInfo as unknown as Spec)).valid).toBe(false);
  });

  it("describes every admin route Fastify registered, and nothing else", async () => {
    const document = await fetchDocument();
    expect(routes.length).toBeGreaterThan(30);
    const registered = routes.map((r) => `${r.method} ${openApiPath(r.url)}`).sort();
    const documented = Object.entries(document.paths)
      .flatMap(([path, operations]) => Object.keys(operations).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(documented).toEqual(registered);
  });

  it("declares request bodies and the admin error body from the route schemas", async () => {
    const document = (await fetchDocument()) as unknown as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components: { schemas: Record<string, unknown> };
    };
    const create = document.paths[`${ADMIN_PREFIX}/issuedApiKeys`]?.post as {
      requestBody: { content: Record<string, { schema: { required: string[]; properties: Record<string, unknown> } }> };
      responses: Record<string, unknown>;
    };
    const body = create.requestBody.content["application/json"]?.schema;
    expect(body?.required).toEqual(["name"]);
    expect(Object.keys(body?.properties ?? {})).toEqual(
      expect.arrayContaining(["organization_id", "name", "scopes", "metadata", "rate_limits", "expire_time"]),
    );
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(["201", "4XX", "5XX"]));
    expect(document.components.schemas.AdminError).toMatchObject({
      properties: { error: { required: ["code", "status", "message", "details"] } },
    });
    const rotate = document.paths[`${ADMIN_PREFIX}/issuedApiKeys/{keyId}:rotate`]?.post as {
      requestBody: { required: boolean };
    };
    expect(rotate.requestBody.required).toBe(false);
  });

  it("documents the bodies the routes really answer", async () => {
    const document = (await fetchDocument()) as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
      components: { schemas: Record<string, object> };
    };
    const ajv = new Ajv2020Module.default({ strict: false, allErrors: true });
    const conforms = (path: string, method: string, status: number, body: unknown) => {
      const response = document.paths[`${ADMIN_PREFIX}${path}`]?.[method]?.responses[String(status)];
      const schema = response?.content?.["application/json"]?.schema;
      expect(schema, `${method} ${path} ${status}`).toBeDefined();
      const validate = ajv.compile({ ...schema, components: document.components });
      expect(validate(body) ? [] : validate.errors, `${method} ${path} ${status}`).toEqual([]);
    };
    const call = async (method: "GET" | "POST", path: string, documented: string, body?: unknown) => {
      const res = await adminCall(t, method, path, body);
      conforms(documented, method.toLowerCase(), res.statusCode, res.json());
      return res.json();
    };
    const org = await call("POST", "/organizations", "/organizations", { name: "Acme" });
    const client = await call("POST", "/scimClients", "/scimClients", {
      organization_id: org.id,
      webhook: { url: "http://127.0.0.1:9/hook" },
    });
    await call("GET", `/scimClients/${client.client_id}`, "/scimClients/{clientId}");
    await call("GET", "/scimClients", "/scimClients");
    const key = await call("POST", "/issuedApiKeys", "/issuedApiKeys", {
      organization_id: org.id,
      name: "k",
      rate_limits: [{ limit: 5, period: "60s" }],
      metadata: { team: "a" },
    });
    await call("GET", `/issuedApiKeys/${key.key_id}`, "/issuedApiKeys/{keyId}");
    await call("POST", "/apiKeys:verify", "/apiKeys:verify", { key: key.secret });
    await call("POST", "/apiKeys:verify", "/apiKeys:verify", { key: "not-a-key" });
    await call("GET", "/identities", "/identities");
    // A refusal: the error body, `4XX` in the document.
    const refused = await adminCall(t, "POST", "/organizations", { name: 5 });
    expect(refused.statusCode).toBe(400);
    conforms("/organizations", "post", "4XX" as unknown as number, refused.json());
  });

  it("is served to admin tokens only, like the rest of the admin API", async () => {
    const res = await t.request({ method: "GET", url: `${ADMIN_PREFIX}/openapi.json` });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: { code: 401, status: "UNAUTHENTICATED" } });
  });
});
