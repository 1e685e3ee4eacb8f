import fc from "fast-check";
import { afterAll, beforeAll, describe, it } from "vitest";
import { adminCall, adminHeaders } from "../helpers/seed.js";
import {
  bodyText,
  contentType,
  hostileString,
  idSegment,
  importBatchBody,
  issuedKeyBody,
  keyUpdateBody,
  organizationBody,
  queryString,
  rawEncode,
  scimClientBody,
  updateMask,
} from "./arbitraries.js";
import { check, expectReady, runsFor, send, timeoutFor } from "./harness.js";
import { useTestApp } from "../helpers/suite.js";

/** Property-based: hostile admin requests never answer 5xx, always the admin error body on 4xx, change nothing then. */
const { t } = useTestApp();
const orgs: string[] = [];
const keys: string[] = [];
const clients: string[] = [];

beforeAll(async () => {
  for (let i = 0; i < 2; i++) {
    const org = await adminCall(t, "POST", "/organizations", { name: `fuzz ${i}` });
    orgs.push(org.json().id as string);
    const key = await adminCall(t, "POST", "/issuedApiKeys", { organization_id: orgs[i], name: `key ${i}` });
    keys.push(key.json().key_id as string);
    const client = await adminCall(t, "POST", "/scimClients", { organization_id: orgs[i] });
    clients.push(client.json().client_id as string);
  }
});
afterAll(async () => {
  await expectReady(t);
});

const A = "/v2alpha1/admin";
const headersWith = (type: string | undefined): Record<string, string> => ({
  ...adminHeaders,
  ...(type === undefined ? {} : { "content-type": type }),
});

describe("admin fuzz: never a 5xx, always the admin error body, no change from a refused request", () => {
  const bodyRuns = runsFor(0.16);
  it(`organization, SCIM client and API key bodies (${bodyRuns} cases)`, {
    timeout: timeoutFor(bodyRuns),
  }, async () => {
    const request = fc.oneof(
      fc.tuple(fc.constant("POST"), fc.constant("/organizations"), bodyText(organizationBody)),
      fc.tuple(fc.constant("POST"), fc.constant("/scimClients"), bodyText(scimClientBody(orgs))),
      fc.tuple(
        fc.constant("PATCH"),
        idSegment(clients).map((id) => `/scimClients/${id}`),
        bodyText(scimClientBody(orgs)),
      ),
      fc.tuple(fc.constant("POST"), fc.constant("/issuedApiKeys"), bodyText(issuedKeyBody(orgs))),
      fc.tuple(fc.constant("POST"), fc.constant("/importedApiKeys:batchCreate"), bodyText(importBatchBody(orgs))),
      fc.tuple(
        fc.constant("PATCH"),
        fc
          .tuple(idSegment(keys), updateMask)
          .map(([id, mask]) => `/issuedApiKeys/${id}?update_mask=${rawEncode(mask)}`),
        bodyText(keyUpdateBody(orgs)),
      ),
      fc.tuple(
        fc.constant("POST"),
        idSegment(keys).map((id) => `/issuedApiKeys/${id}:rotate`),
        bodyText(fc.record({ grace_period: fc.oneof(hostileString, fc.integer()) }, { requiredKeys: [] })),
      ),
      fc.tuple(
        fc.constant("POST"),
        fc.constant("/apiKeys:verify"),
        bodyText(fc.record({ key: hostileString, organization_id: fc.constantFrom(...orgs) }, { requiredKeys: [] })),
      ),
      fc.tuple(
        fc.constant("POST"),
        fc.constant("/identities:verifyPassword"),
        bodyText(fc.record({ identifier: hostileString, password: hostileString }, { requiredKeys: [] })),
      ),
    );
    const arbitrary = fc.tuple(request, contentType("application/json"));
    await check("admin bodies", arbitrary, bodyRuns, async ([[method, path, payload], type]) => {
      await send(t, "admin", { method, url: `${A}${path}`, headers: headersWith(type), payload });
    });
    await expectReady(t);
  });

  const queryRuns = runsFor(0.08);
  it(`admin lists, lookups and paths (${queryRuns} cases)`, { timeout: timeoutFor(queryRuns) }, async () => {
    const query = fc.dictionary(
      fc.constantFrom("page_size", "page_token", "organization_id", "actor_id", "filter", "show_deleted", "event"),
      hostileString,
      { maxKeys: 3 },
    );
    const path = fc.oneof(
      fc.constantFrom("/organizations", "/scimClients", "/issuedApiKeys", "/importedApiKeys", "/identities"),
      idSegment(orgs).map((id) => `/organizations/${id}`),
      idSegment(keys).map((id) => `/issuedApiKeys/${id}`),
      idSegment(clients).map((id) => `/scimClients/${id}/webhookEvents`),
      idSegment([]).map((id) => `/identities/${id}`),
      idSegment([]).map((id) => `/${id}`),
    );
    const arbitrary = fc.tuple(fc.constantFrom("GET", "DELETE", "PUT"), path, query);
    await check("admin queries", arbitrary, queryRuns, async ([method, p, q]) => {
      const url = `${A}${p}${Object.keys(q).length === 0 ? "" : `?${queryString(q)}`}`;
      await send(t, "admin", { method, url, headers: headersWith(undefined) });
    });
    await expectReady(t);
  });
});
