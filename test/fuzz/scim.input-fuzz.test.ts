import fc from "fast-check";
import { afterAll, beforeAll, describe, it } from "vitest";
import { scim } from "../helpers/seed.js";
import {
  bodyText,
  contentType,
  GROUP_PATCH_PATHS,
  groupBody,
  idSegment,
  listQuery,
  patchBody,
  queryString,
  userBody,
} from "./arbitraries.js";
import { check, expectReady, runsFor, send, timeoutFor } from "./harness.js";
import { useTestApp } from "../helpers/suite.js";

/** Property-based: hostile SCIM requests never answer 5xx, always answer a SCIM Error on 4xx, change nothing then. */
const { t, c } = useTestApp({ seed: true });
const users: string[] = [];
const groups: string[] = [];

beforeAll(async () => {
  for (let i = 0; i < 3; i++) {
    const u = await scim(t, c, "POST", "/Users", { userName: `seed${i}@example.com` });
    users.push(u.json().id as string);
    const g = await scim(t, c, "POST", "/Groups", { displayName: `seed group ${i}`, members: [{ value: users[i] }] });
    groups.push(g.json().id as string);
  }
});
afterAll(async () => {
  await expectReady(t);
});

const headersWith = (type: string | undefined): Record<string, string> => ({
  authorization: `Bearer ${c.secret}`,
  ...(type === undefined ? {} : { "content-type": type }),
});

const scimType = contentType("application/scim+json", "application/json");

describe("SCIM fuzz: never a 5xx, always a SCIM Error, no change from a refused request", () => {
  const userRuns = runsFor(0.14);
  it(`user bodies on POST and PUT /Users (${userRuns} cases)`, { timeout: timeoutFor(userRuns) }, async () => {
    const arbitrary = fc.tuple(fc.constantFrom("POST", "PUT"), bodyText(userBody), scimType, idSegment(users));
    await check("users", arbitrary, userRuns, async ([method, payload, type, id]) => {
      const url = method === "POST" ? `${c.base}/Users` : `${c.base}/Users/${id}`;
      await send(t, "scim", { method, url, headers: headersWith(type), payload });
    });
    await expectReady(t);
  });

  const groupRuns = runsFor(0.12);
  it(`group bodies on POST and PUT /Groups (${groupRuns} cases)`, { timeout: timeoutFor(groupRuns) }, async () => {
    const arbitrary = fc.tuple(fc.constantFrom("POST", "PUT"), bodyText(groupBody([...users, ...groups])), scimType);
    await check("groups", arbitrary, groupRuns, async ([method, payload, type]) => {
      const url = method === "POST" ? `${c.base}/Groups` : `${c.base}/Groups/${groups[0]}`;
      await send(t, "scim", { method, url, headers: headersWith(type), payload });
    });
    await expectReady(t);
  });

  const patchRuns = runsFor(0.12);
  it(`PATCH operations on users and groups (${patchRuns} cases)`, { timeout: timeoutFor(patchRuns) }, async () => {
    const arbitrary = fc.oneof(
      fc.tuple(fc.constant("Users"), bodyText(patchBody()), idSegment(users)),
      fc.tuple(fc.constant("Groups"), bodyText(patchBody(GROUP_PATCH_PATHS)), idSegment(groups)),
    );
    await check("patch", arbitrary, patchRuns, async ([resource, payload, id]) => {
      await send(t, "scim", {
        method: "PATCH",
        url: `${c.base}/${resource}/${id}`,
        headers: headersWith("application/scim+json"),
        payload,
      });
    });
    await expectReady(t);
  });

  const queryRuns = runsFor(0.14);
  it(`list queries: filters, cursors, paging, projections (${queryRuns} cases)`, {
    timeout: timeoutFor(queryRuns),
  }, async () => {
    const arbitrary = fc.tuple(
      fc.constantFrom("Users", "Groups"),
      listQuery,
      fc.option(idSegment([...users, ...groups])),
    );
    await check("queries", arbitrary, queryRuns, async ([resource, query, id]) => {
      const path = id === null ? `/${resource}` : `/${resource}/${id}`;
      await send(t, "scim", {
        method: "GET",
        url: `${c.base}${path}?${queryString(query)}`,
        headers: headersWith(undefined),
      });
    });
    await expectReady(t);
  });

  const routeRuns = runsFor(0.08);
  it(`methods, paths, content types and authorization (${routeRuns} cases)`, {
    timeout: timeoutFor(routeRuns),
  }, async () => {
    const segment = fc.oneof(
      fc.constantFrom("Users", "Groups", "Schemas", "ResourceTypes", "ServiceProviderConfig", "Bulk", "Me", ".search"),
      idSegment(users),
    );
    const arbitrary = fc.tuple(
      fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"),
      fc.array(segment, { minLength: 0, maxLength: 3 }),
      fc.oneof(fc.constant(c.clientId), idSegment([c.clientId])),
      fc.option(fc.constantFrom("Bearer nope", "", "Basic eA==", "Bearer", "\tBearer  x ")),
      bodyText(fc.constant({ a: 1 })),
      scimType,
    );
    await check("routes", arbitrary, routeRuns, async ([method, segments, clientId, auth, payload, type]) => {
      const headers: Record<string, string> = { authorization: auth ?? `Bearer ${c.secret}` };
      if (type !== undefined) headers["content-type"] = type;
      const url = `/scim/${clientId}/v2/${segments.join("/")}`;
      const withBody = method !== "GET" && method !== "HEAD" && method !== "OPTIONS";
      await send(t, "scim", { method, url, headers, ...(withBody ? { payload } : {}) });
    });
    await expectReady(t);
  });
});
