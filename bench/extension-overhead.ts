/**
 * What a SCIM client without extensions pays for them on the users path: the per-request checks the extension
 * support added (registry lookup, the "plain schemas" check of the text rendering, the extension-index values of a
 * write, the foreign-extension scan of a PATCH), each timed alone over many calls. Run: `npx tsx bench/extension-overhead.ts`.
 */
import { performance } from "node:perf_hooks";
import { extensionValuesOf } from "../src/directory/identities/extension-values.js";
import type { ScimClient } from "../src/directory/scim-clients/types.js";
import { registryOf } from "../src/scim/schema/client-registry.js";
import { CORE_REGISTRY } from "../src/scim/schema/registry.js";
import { isPlainSchemas } from "../src/scim/users/extension-render.js";
import { hasForeign } from "../src/scim/users/foreign-extensions.js";
import { validateUser } from "../src/scim/users/validate.js";

const CALLS = 1_000_000;
const client = { extensions: [], unknownExtensions: "reject", indexedAttributes: [] } as unknown as ScimClient;
const body = {
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
  userName: "ann@acme.example",
  name: { givenName: "Ann", familyName: "Lee" },
  emails: [{ value: "ann@acme.example", type: "work", primary: true }],
  active: true,
  "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { department: "R&D" },
};
const doc = validateUser(body).scim;
const schemasText =
  '["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"]';

let sink = 0;
const time = (what: string, run: () => unknown, calls = CALLS) => {
  for (let i = 0; i < 10_000; i++) run();
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) if (run()) sink++;
  const ns = ((performance.now() - t0) * 1e6) / calls;
  console.log(`${what.padEnd(48)} ${ns.toFixed(1)} ns/call`);
};

time("registryOf(client without extensions)", () => registryOf(client));
time("isPlainSchemas(core registry, stored schemas)", () => isPlainSchemas(CORE_REGISTRY, schemasText));
time("extensionValuesOf(document, no indexed)", () => extensionValuesOf(doc, client.indexedAttributes));
time("hasForeign(document) (PATCH only)", () => hasForeign(doc));
time("for scale: validateUser(body), unchanged work", () => validateUser(body), 100_000);
console.log(sink > 0 ? "" : "-");
