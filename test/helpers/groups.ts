import type { LightMyRequestResponse } from "fastify";
import type { TestApp } from "./app.js";
import { type SeededClient, scim } from "./seed.js";
import { GROUP_SCHEMA, PATCH_OP } from "./constants.js";

export interface ScimMember {
  value: string;
  display?: string;
  type?: string;
  $ref?: string;
}

/** POST /Groups; throws unless 201, returns the created resource. */
export async function createGroup(
  t: TestApp,
  c: SeededClient,
  displayName: string,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; members?: ScimMember[] } & Record<string, unknown>> {
  const res = await scim(t, c, "POST", "/Groups", { schemas: [GROUP_SCHEMA], displayName, ...extra });
  if (res.statusCode !== 201) throw new Error(`group create failed: ${res.statusCode} ${res.body}`);
  return res.json();
}

export function patchGroup(
  t: TestApp,
  c: SeededClient,
  id: string,
  operations: unknown[],
  query = "",
): Promise<LightMyRequestResponse> {
  return scim(t, c, "PATCH", `/Groups/${id}${query}`, { schemas: [PATCH_OP], Operations: operations });
}

/** The member ids of a group, sorted, read through GET /Groups/{id}. */
export async function memberIds(t: TestApp, c: SeededClient, id: string): Promise<string[]> {
  const res = await scim(t, c, "GET", `/Groups/${id}`);
  if (res.statusCode !== 200) throw new Error(`group read failed: ${res.statusCode} ${res.body}`);
  return ((res.json().members ?? []) as ScimMember[]).map((m) => m.value).sort();
}

export const sorted = (ids: readonly string[]): string[] => [...ids].sort();

/**
 * A SCIM client body whose group PATCH answers 200 with the whole group (the connection setting), for the tests that
 * check a PATCH's effect in its answer; the default answer (204) is proven in groups.patch-answer.test.ts.
 */
export const FULL_GROUP_PATCH = { group_patch_response: "full" } as const;

/** Writes a group with one direct user member straight into the tables, bypassing SCIM (a group the client did not create). */
export async function insertGroupWithUser(
  t: TestApp,
  group: { id: string; organizationId: string; displayName: string; identityId: string },
): Promise<void> {
  const now = new Date();
  await t.db
    .insertInto("directory_groups")
    .values({
      id: group.id,
      organization_id: group.organizationId,
      display_name: group.displayName,
      external_id: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await t.db
    .insertInto("group_user_members")
    .values({ group_id: group.id, identity_id: group.identityId, organization_id: group.organizationId })
    .execute();
}
