import { type RawBuilder, sql } from "kysely";
import type { Executor } from "./repo.js";
import type { MemberFields } from "./types.js";

/** One chunk of a group's members: their JSON texts joined by commas, and the last member id it holds. */
interface MemberChunk {
  readonly n: number;
  readonly last: string | null;
  readonly members: string | null;
}

const memberObject = (fields: MemberFields, baseUrl: string): RawBuilder<unknown> => {
  const parts: RawBuilder<unknown>[] = [];
  if (fields.value) parts.push(sql`'value', m.value`);
  if (fields.display) parts.push(sql`'display', m.display`);
  if (fields.type) parts.push(sql`'type', m.type`);
  if (fields.ref) parts.push(sql`'$ref', ${baseUrl} || m.endpoint || m.value`);
  return sql`json_build_object(${sql.join(parts)})`;
};

/**
 * A group's members in id order (as membersJson orders them), `size` at a time: each chunk is one statement, a
 * keyset (`id > last`) on the two membership primary keys merged, so a chunk costs the same wherever it starts and
 * memory holds one chunk, never the whole list. Each chunk is read on its own (no transaction is held while the
 * client reads): a membership change committed while the list is read shows in the chunks not yet read, and no
 * member appears twice.
 */
export async function* memberChunks(
  db: Executor,
  orgId: string,
  groupId: string,
  fields: MemberFields,
  baseUrl: string,
  size: number,
): AsyncGenerator<string, void, undefined> {
  const member = memberObject(fields, baseUrl);
  let after: string | undefined;
  for (;;) {
    const userFrom = after === undefined ? sql`` : sql`and u.identity_id > ${after}::uuid`;
    const groupFrom = after === undefined ? sql`` : sql`and gg.member_group_id > ${after}::uuid`;
    const { rows } = await sql<MemberChunk>`
      select count(*)::int as n, max(m.value::text collate "C") as last,
        string_agg(${member}::text, ',' order by m.value) as members
      from (
        (select u.identity_id as value, i.user_name as display, 'User' as type, '/Users/' as endpoint
          from group_user_members u join identities i on i.id = u.identity_id
          where u.organization_id = ${orgId} and u.group_id = ${groupId} ${userFrom}
          order by u.identity_id limit ${size})
        union all
        (select gg.member_group_id, g.display_name, 'Group', '/Groups/'
          from group_group_members gg join directory_groups g on g.id = gg.member_group_id
          where gg.organization_id = ${orgId} and gg.group_id = ${groupId} ${groupFrom}
          order by gg.member_group_id limit ${size})
        order by value limit ${size}
      ) m`.execute(db);
    const [chunk] = rows;
    if (chunk === undefined || chunk.n === 0 || chunk.members === null || chunk.last === null) return;
    yield chunk.members;
    if (chunk.n < size) return;
    after = chunk.last;
  }
}
