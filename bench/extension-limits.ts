/**
 * What the largest extension declarations cost (docs/scim-extensions.md "Limits"): one client with a maximal
 * declaration — its body, its /Schemas answer (bytes, time) and the heap it adds once cached — then CLIENTS such
 * clients in one organization listed through the admin API page by page (status, bytes and time of each page).
 * The declaration is EXT extensions × ATTRS attributes × SUBS sub-attributes (complex attributes), every
 * description DESC characters long; the defaults are what the documented limits allow.
 * Run: `node --expose-gc --import tsx bench/extension-limits.ts` (ROSTER_DATABASE_URL: a throwaway schema in it).
 */
import { performance } from "node:perf_hooks";
import { startInProcess } from "./lib/in-process.js";

const EXT = Number(process.env.EXT ?? 10);
const ATTRS = Number(process.env.ATTRS ?? 10);
const SUBS = Number(process.env.SUBS ?? 9);
const DESC = Number(process.env.DESC ?? 100);
const CLIENTS = Number(process.env.CLIENTS ?? 26);
const admin = { authorization: "Bearer bench-admin" };

const attribute = (name: string, subs: number) => ({
  name,
  type: subs > 0 ? "complex" : "string",
  description: "d".repeat(DESC),
  ...(subs > 0
    ? { subAttributes: Array.from({ length: subs }, (_, k) => ({ name: `s${k}`, description: "s".repeat(DESC) })) }
    : {}),
});
const declaration = Array.from({ length: EXT }, (_, i) => ({
  schema: `urn:example:bench:${i}:User`,
  name: `Bench${i}`,
  description: "x".repeat(DESC),
  attributes: Array.from({ length: ATTRS }, (_, j) => attribute(`a${j}`, SUBS)),
}));
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
const heap = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
};

const roster = await startInProcess();
const { app } = roster;
try {
  const org = (
    await app.inject({ method: "POST", url: "/v2alpha1/admin/organizations", headers: admin, payload: { name: "x" } })
  ).json() as { id: string };
  const payload = { organization_id: org.id, secret: "bench-limits-secret", extensions: declaration };
  console.log(`declaration ${EXT}×${ATTRS}×${SUBS}: body ${mib(Buffer.byteLength(JSON.stringify(payload)))}`);
  let t0 = performance.now();
  const created = await app.inject({ method: "POST", url: "/v2alpha1/admin/scimClients", headers: admin, payload });
  console.log(`create: ${created.statusCode} in ${(performance.now() - t0).toFixed(0)} ms`);
  if (created.statusCode !== 201) console.log(created.body.slice(0, 300));
  else {
    const clientId = (created.json() as { client_id: string }).client_id;
    const headers = { authorization: "Bearer bench-limits-secret" };
    const before = heap();
    for (const round of [1, 2, 3]) {
      t0 = performance.now();
      const schemas = await app.inject({ method: "GET", url: `/scim/${clientId}/v2/Schemas`, headers });
      const ms = performance.now() - t0;
      console.log(
        `/Schemas #${round}: ${schemas.statusCode}, ${mib(schemas.rawPayload.length)} in ${ms.toFixed(0)} ms`,
      );
    }
    console.log(`heap added once cached: ${mib(heap() - before)}`);
  }
  for (let i = 1; i < CLIENTS; i++) {
    const more = await app.inject({
      method: "POST",
      url: "/v2alpha1/admin/scimClients",
      headers: admin,
      payload: { organization_id: org.id, extensions: declaration },
    });
    if (more.statusCode !== 201) throw new Error(`client ${i}: ${more.statusCode} ${more.body.slice(0, 200)}`);
  }
  let token = "";
  let pages = 0;
  let listed = 0;
  const started = performance.now();
  do {
    t0 = performance.now();
    const page = await app.inject({
      method: "GET",
      url: `/v2alpha1/admin/scimClients?organization_id=${org.id}&page_size=1000&page_token=${token}`,
      headers: admin,
    });
    const ms = performance.now() - t0;
    console.log(`list page ${++pages}: ${page.statusCode}, ${mib(page.rawPayload.length)} in ${ms.toFixed(0)} ms`);
    if (page.statusCode !== 200) {
      console.log(page.body.slice(0, 300));
      break;
    }
    const body = page.json() as { scim_clients: unknown[]; next_page_token: string };
    listed += body.scim_clients.length;
    token = body.next_page_token;
  } while (token !== "");
  console.log(
    `listed ${listed} of ${CLIENTS} clients in ${pages} pages, ${(performance.now() - started).toFixed(0)} ms`,
  );
  console.log(`peak rss ${mib(process.resourceUsage().maxRSS * 1024)}`);
} finally {
  await roster.close();
}
