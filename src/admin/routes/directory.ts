import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { GroupService } from "../../directory/groups/service.js";
import type { Group } from "../../directory/groups/types.js";
import type { FilterNode } from "../../directory/search/types.js";
import type { IdentityService } from "../../directory/identities/service.js";
import type { StoredUser } from "../../directory/identities/types.js";
import { isUuid } from "../../platform/ids.js";
import { ScimError } from "../../scim/errors.js";
import { parseFilter, type ResourceKind } from "../../scim/query/filter.js";
import { invalidArgument, notFound } from "../errors.js";
import { pageOf, parsePageRequest, pathUuid, requireUuid } from "../paging.js";
import {
  DirectoryQuery,
  GroupDetailJson,
  GroupJson,
  OrgItemParams,
  OrgParams,
  UserDetailJson,
  UserSummaryJson,
} from "../schemas/directory.js";
import { errors, Page } from "../schemas/kit.js";

export interface DirectoryRouteDeps {
  readonly identities: IdentityService;
  readonly groups: GroupService;
}

type ByOrg = { Params: Static<typeof OrgParams>; Querystring: Static<typeof DirectoryQuery> };
type ByItem = { Params: Static<typeof OrgItemParams> };
const tags = ["Directory"];
const TotalSize = Type.Object({
  total_size: Type.Optional(
    Type.Integer({ description: "How many the organization has; on the first page of an unfiltered list only" }),
  ),
});
const list = (key: string, item: object) => ({
  tags,
  params: OrgParams,
  querystring: DirectoryQuery,
  response: { 200: Type.Composite([Page(key, item as typeof UserSummaryJson), TotalSize]), ...errors },
});
/**
 * The first page of an unfiltered list is read as an offset page, which brings the organization's total from its
 * counters (a few rows whatever its size) in the same order as the keyset pages after it.
 */
const pageSpec = (after: string | undefined, filter: FilterNode | undefined, limit: number) =>
  after === undefined && filter === undefined
    ? ({ kind: "offset", offset: 0, limit } as const)
    : ({ kind: "cursor", afterId: after, limit } as const);
const totalOf = (total: number | undefined) => (total === undefined ? {} : { total_size: total });
const one = (item: object) => ({ tags, params: OrgItemParams, response: { 200: item, ...errors } });

/**
 * The admin portal's directory browser: an organization's users and groups, read-only. Search is a SCIM filter
 * (`filter=userName eq "ada@example.com"`, docs/scim-users.md); its indexed forms are index probes.
 */
export function registerDirectoryRoutes(scope: FastifyInstance, deps: DirectoryRouteDeps): void {
  const orgOf = (raw: string): string => pathUuid(raw, "organization");

  scope.get<ByOrg>("/organizations/:orgId/users", { schema: list("users", UserSummaryJson) }, async (req) => {
    const query = req.query;
    const page = parsePageRequest(query);
    const after = page.after === undefined ? undefined : requireUuid(page.after, "page_token");
    const filter = filterOf("User", query);
    const { rows, total } = await deps.identities.list(
      orgOf(req.params.orgId),
      { filter },
      pageSpec(after, filter, page.pageSize + 1),
      { groups: true },
    );
    const { items, next_page_token } = pageOf(rows, page.pageSize, (u) => u.id);
    return { users: items.map(userSummary), next_page_token, ...totalOf(total) };
  });

  scope.get<ByItem>("/organizations/:orgId/users/:id", { schema: one(UserDetailJson) }, async (req) => {
    const orgId = orgOf(req.params.orgId);
    const id = isUuid(req.params.id) ? req.params.id.toLowerCase() : undefined;
    const user = id === undefined ? undefined : await deps.identities.get(orgId, id, { groups: true });
    const identity = id === undefined ? undefined : await deps.identities.getIdentity(id);
    if (user === undefined || identity === undefined) throw notFound(`user ${req.params.id} does not exist`);
    return {
      ...userSummary(user),
      scim: user.document.value,
      traits: identity.traits,
      has_password: identity.hasPassword,
    };
  });

  scope.get<ByOrg>("/organizations/:orgId/groups", { schema: list("groups", GroupJson) }, async (req) => {
    const query = req.query;
    const orgId = orgOf(req.params.orgId);
    const page = parsePageRequest(query);
    const after = page.after === undefined ? undefined : requireUuid(page.after, "page_token");
    const filter = filterOf("Group", query);
    const { rows, total } = await deps.groups.list(orgId, { filter }, pageSpec(after, filter, page.pageSize + 1));
    const { items, next_page_token } = pageOf(rows, page.pageSize, (g) => g.id);
    const counts = await deps.groups.memberCounts(
      orgId,
      items.map((g) => g.id),
    );
    return { groups: items.map((g) => groupJson(g, counts.get(g.id) ?? 0)), next_page_token, ...totalOf(total) };
  });

  scope.get<ByItem>("/organizations/:orgId/groups/:id", { schema: one(GroupDetailJson) }, async (req) => {
    const orgId = orgOf(req.params.orgId);
    const group = isUuid(req.params.id) ? await deps.groups.get(orgId, req.params.id.toLowerCase()) : undefined;
    if (group === undefined) throw notFound(`group ${req.params.id} does not exist`);
    const rows = (await deps.groups.members(orgId, [group.id])).get(group.id) ?? [];
    const members = rows.map(({ value, display, type }) => ({ value, display, type }));
    return { ...groupJson(group, members.length), members };
  });
}

function filterOf(kind: ResourceKind, query: Static<typeof DirectoryQuery>): FilterNode | undefined {
  const raw = query.filter;
  if (raw === undefined || raw.trim() === "") return undefined;
  try {
    return parseFilter(kind, raw);
  } catch (e) {
    if (e instanceof ScimError) throw invalidArgument(`filter: ${e.detail ?? "invalid"}`);
    throw e;
  }
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

function primaryEmail(scim: Record<string, unknown>): string | null {
  const emails = Array.isArray(scim.emails) ? (scim.emails as Record<string, unknown>[]) : [];
  const chosen = emails.find((e) => e?.primary === true) ?? emails[0];
  return chosen === undefined ? null : str(chosen.value);
}

function displayNameOf(scim: Record<string, unknown>): string | null {
  const name = scim.name as Record<string, unknown> | undefined;
  const formatted = str(name?.formatted);
  if (formatted !== null) return formatted;
  const parts = [str(name?.givenName), str(name?.familyName)].filter((p) => p !== null);
  return parts.length > 0 ? parts.join(" ") : str(scim.displayName);
}

function userSummary(u: StoredUser) {
  const scim = u.document.value;
  return {
    id: u.id,
    user_name: str(scim.userName) ?? "",
    external_id: str(scim.externalId),
    display_name: displayNameOf(scim),
    email: primaryEmail(scim),
    active: scim.active !== false,
    groups: (u.groups ?? []).map((g) => ({ id: g.groupId, display_name: g.displayName })),
    create_time: u.createdAt,
    update_time: u.updatedAt,
  };
}

const groupJson = (g: Group, memberCount: number) => ({
  id: g.id,
  display_name: g.displayName,
  external_id: g.externalId,
  member_count: memberCount,
  create_time: g.createdAt.toISOString(),
  update_time: g.updatedAt.toISOString(),
});
