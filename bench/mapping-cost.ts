/**
 * The cost of the data mapping per SCIM write: POST /Users and PATCH /Users with a client's own JSONata mapping
 * (evaluated in the worker pool) and with the default mapping (plain code on the request thread), through the SCIM
 * routes (app.inject). Run: `ROSTER_DATABASE_URL=postgres://… npx tsx bench/mapping-cost.ts` or embedded.
 */
import { performance } from "node:perf_hooks";
import { startInProcess } from "./lib/in-process.js";

const ROUNDS = Number(process.env.MAPPING_ROUNDS ?? 300);
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const CUSTOM = '{"login": $lowercase(userName), "email": emails[0].value, "title": title}';
const roster = await startInProcess();
const { app } = roster;

const ADMIN = { authorization: "Bearer bench-admin" };
async function clientWith(mapping: string | undefined) {
  const { base, headers, organizationId } = await roster.scimClient();
  if (mapping === undefined) return { base, headers };
  const created = await app.inject({
    method: "POST",
    url: "/v2alpha1/admin/scimClients",
    headers: ADMIN,
    payload: { organization_id: organizationId, secret: "bench-scim-secret-mapped", mapping },
  });
  const clientId = created.json().client_id as string;
  return {
    base: `/scim/${clientId}/v2`,
    headers: { authorization: "Bearer bench-scim-secret-mapped", "content-type": "application/scim+json" },
  };
}

for (const [name, mapping] of [
  ["default mapping", undefined],
  ["own JSONata mapping", CUSTOM],
] as const) {
  const { base, headers } = await clientWith(mapping);
  const call = async (method: "POST" | "PATCH", url: string, body: unknown) => {
    const res = await app.inject({ method, url: `${base}${url}`, headers, payload: JSON.stringify(body) });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
    return res;
  };
  const ids: string[] = [];
  for (let i = 0; i < 30; i++)
    await call("POST", "/Users", { schemas: [USER], userName: `warm${i}-${name.length}@b.c` });
  let started = performance.now();
  for (let i = 0; i < ROUNDS; i++) {
    const res = await call("POST", "/Users", {
      schemas: [USER],
      userName: `user${i}-${name.length}@bench.local`,
      emails: [{ value: `user${i}-${name.length}@bench.local`, primary: true }],
    });
    ids.push(res.json().id);
  }
  const post = (performance.now() - started) / ROUNDS;
  started = performance.now();
  for (const [i, id] of ids.entries()) {
    await call("PATCH", `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "title", value: `title ${i}` }],
    });
  }
  const patch = (performance.now() - started) / ROUNDS;
  console.log(
    `${name.padEnd(22)} POST /Users ${post.toFixed(2)} ms, PATCH /Users ${patch.toFixed(2)} ms (mean of ${ROUNDS})`,
  );
}
await roster.close();
