import { type RawBuilder, sql } from "kysely";
import { preparedStatement, runPrepared } from "../../storage/prepared.js";
import { isForeignKeyViolation } from "../../storage/errors.js";
import { GroupError } from "./errors.js";
import type { Executor } from "./repo.js";
import type { Member, MemberRef } from "./types.js";

const MEMBER_PROBLEMS = preparedStatement("member_problems");
const ORGANIZATION_LOCK = preparedStatement("organization_lock");
const ORGANIZATION_TRY_LOCK = preparedStatement("organization_try_lock");
const CHANGED_MEMBERS = preparedStatement("changed_members");
const GROUP_MEMBERS = preparedStatement("group_members");

/** A user whose membership changed, with what a membership event needs (identities.scim: the SCIM user as written). */
export interface MemberUser {
  readonly id: string;
  readonly scim: Record<string, unknown>;
}

/** A named member that cannot be added: unknown in the organization, or present with another `type`. */
export interface MemberProblem {
  readonly value: string;
  readonly type: string | null;
  readonly kind: "User" | "Group" | null;
}

/**
 * Member rules in one statement for any number of members: each id is looked up among the organization's
 * identities and groups. Returns the rows that are not plain users (groups and problems); the rest are users.
 */
export async function classifyMembers(
  db: Executor,
  orgId: string,
  refs: readonly MemberRef[],
): Promise<{ groups: string[]; problems: MemberProblem[] }> {
  const ids = refs.map((r) => r.value);
  const types = refs.map((r) => r.type ?? null);
  const { rows } = await MEMBER_PROBLEMS.sql<MemberProblem>`
    select v.id as value, v.type,
      case when i.id is not null then 'User' when g.id is not null then 'Group' end as kind
    from unnest(${ids}::uuid[], ${types}::text[]) as v(id, type)
    left join identities i on i.organization_id = ${orgId} and i.id = v.id
    left join directory_groups g on g.organization_id = ${orgId} and g.id = v.id
    where i.id is null or (v.type is not null and v.type <> 'User')
  `.execute(db);
  const groups: string[] = [];
  const problems: MemberProblem[] = [];
  for (const row of rows) {
    if (row.kind === null || (row.type !== null && row.type !== row.kind)) problems.push(row);
    else groups.push(row.value);
  }
  return { groups, problems };
}

/** Whether making `memberGroupIds` members of `parentId` closes a cycle: one recursive walk down from them. */
export async function wouldCycle(
  db: Executor,
  orgId: string,
  parentId: string,
  memberGroupIds: readonly string[],
): Promise<boolean> {
  const { rows } = await sql<{ cycle: boolean }>`
    with recursive reach(id) as (
      select unnest(${memberGroupIds}::uuid[])
      union
      select m.member_group_id from group_group_members m join reach r on m.group_id = r.id
      where m.organization_id = ${orgId}
    )
    select exists (select 1 from reach where id = ${parentId}) as cycle
  `.execute(db);
  return rows[0]?.cycle === true;
}

/**
 * Serialises the nesting changes of one organization (two concurrent requests could otherwise each add one half of
 * a cycle). A row lock on the organization, weak enough not to block foreign-key checks (portable SQL).
 * It comes first in the lock order of docs/decisions.md "Group membership lock order": `wait` is only used before
 * any group row is locked; a transaction that already holds a group row asks with `try`, which never waits and
 * answers whether the lock was free.
 */
export async function lockNesting(db: Executor, orgId: string, mode: "wait" | "try" = "wait"): Promise<boolean> {
  const { rows } =
    mode === "wait"
      ? await ORGANIZATION_LOCK.sql`select id from organizations where id = ${orgId} for no key update`.execute(db)
      : await ORGANIZATION_TRY_LOCK.sql`select id from organizations where id = ${orgId}
          for no key update skip locked`.execute(db);
  return rows.length === 1;
}

/** A member deleted by a concurrent request between its lookup and the insert: the request named a missing member. */
const MEMBER_KEYS = ["group_user_members_identity_fkey", "group_group_members_member_fkey"];
const translateMissing = (e: unknown): never => {
  if (MEMBER_KEYS.some((key) => isForeignKeyViolation(e, key))) {
    throw new GroupError("invalidMember", "a member was deleted while it was being added");
  }
  throw e;
};

/** Runs a membership change that returns `identity_id`s, with the SCIM documents of the users it changed. */
const withScim = async (db: Executor, changed: RawBuilder<unknown>): Promise<MemberUser[]> => {
  const query = sql<MemberUser>`with changed as (${changed})
    select i.id, i.scim from changed join identities i on i.id = changed.identity_id`;
  return (await runPrepared(db, CHANGED_MEMBERS, query)).rows;
};

/** Adds the organization's identities among `ids`; existing members are left alone and not returned. */
export async function addUsers(db: Executor, orgId: string, groupId: string, ids: readonly string[]) {
  return withScim(
    db,
    sql`
    insert into group_user_members (group_id, identity_id, organization_id)
    select ${groupId}, i.id, i.organization_id from identities i
    where i.organization_id = ${orgId} and i.id = any(${ids}::uuid[])
    on conflict do nothing
    returning identity_id`,
  ).catch(translateMissing);
}

/** The members a removal names: all, the listed ids, or (`keep`) everyone but the listed ids. */
function membersSelected(
  column: "identity_id" | "member_group_id",
  ids: readonly string[] | "all",
  mode: "listed" | "keep",
) {
  if (ids === "all") return sql`true`;
  return mode === "listed"
    ? sql`${sql.ref(column)} = any(${ids}::uuid[])`
    : sql`${sql.ref(column)} <> all(${ids}::uuid[])`;
}

/** Removes the listed users (ids that are not members are ignored); `keep` mode removes everyone else instead. */
export async function removeUsers(
  db: Executor,
  orgId: string,
  groupId: string,
  ids: readonly string[] | "all",
  mode: "listed" | "keep" = "listed",
) {
  const which = membersSelected("identity_id", ids, mode);
  return withScim(
    db,
    sql`
    delete from group_user_members
    where organization_id = ${orgId} and group_id = ${groupId} and ${which}
    returning identity_id`,
  );
}

export async function addGroups(db: Executor, orgId: string, groupId: string, ids: readonly string[]) {
  const { rows } = await sql<{ id: string }>`
    insert into group_group_members (group_id, member_group_id, organization_id)
    select ${groupId}, g.id, g.organization_id from directory_groups g
    where g.organization_id = ${orgId} and g.id = any(${ids}::uuid[])
    on conflict do nothing
    returning member_group_id as id`
    .execute(db)
    .catch(translateMissing);
  return rows.map((r) => r.id);
}

export async function removeGroups(
  db: Executor,
  orgId: string,
  groupId: string,
  ids: readonly string[] | "all",
  mode: "listed" | "keep" = "listed",
) {
  const which = membersSelected("member_group_id", ids, mode);
  const { rows } = await sql<{ id: string }>`
    delete from group_group_members
    where organization_id = ${orgId} and group_id = ${groupId} and ${which}
    returning member_group_id as id`.execute(db);
  return rows.map((r) => r.id);
}

/**
 * The direct members of each given group, ordered by id (display resolved at read time), one statement for any
 * number of groups; groups without members are absent from the map. For list pages: one group's members are read
 * in chunks (member-stream-repo.ts).
 */
export async function membersOf(
  db: Executor,
  orgId: string,
  groupIds: readonly string[],
): Promise<Map<string, Member[]>> {
  const { rows } = await GROUP_MEMBERS.sql<Member & { group_id: string }>`
    select m.group_id, m.value, m.type, m.display
    from (
      select u.group_id, u.identity_id as value, 'User' as type, i.user_name as display
      from group_user_members u join identities i on i.id = u.identity_id
      where u.organization_id = ${orgId} and u.group_id = any(${groupIds}::uuid[])
      union all
      select gg.group_id, gg.member_group_id, 'Group', g.display_name
      from group_group_members gg join directory_groups g on g.id = gg.member_group_id
      where gg.organization_id = ${orgId} and gg.group_id = any(${groupIds}::uuid[])
    ) m
    order by m.group_id, m.value
  `.execute(db);
  const byGroup = new Map<string, Member[]>();
  for (const { group_id, value, type, display } of rows) {
    const members = byGroup.get(group_id);
    if (members === undefined) byGroup.set(group_id, [{ value, type, display }]);
    else members.push({ value, type, display });
  }
  return byGroup;
}
