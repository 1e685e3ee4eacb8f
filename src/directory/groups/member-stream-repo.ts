import { sql } from "kysely";
import type { Executor } from "./repo.js";
import type { Member } from "./types.js";

/**
 * A group's members in id order (as membersOf orders them), `size` rows at a time: each chunk is one statement, a
 * keyset (`id > last`) on the two membership primary keys merged, so a chunk costs the same wherever it starts and
 * memory holds one chunk, never the whole list. The next chunk is read only when the consumer asks for it, so a
 * reader that waits (a slow socket) holds no more than one chunk. Each chunk is read on its own (no transaction is
 * held while the client reads): a membership change committed while the list is read shows in the chunks not yet
 * read, and no member appears twice.
 */
export async function* memberChunks(
  db: Executor,
  orgId: string,
  groupId: string,
  size: number,
): AsyncGenerator<Member[], void, undefined> {
  let after: string | undefined;
  for (;;) {
    const userFrom = after === undefined ? sql`` : sql`and u.identity_id > ${after}::uuid`;
    const groupFrom = after === undefined ? sql`` : sql`and gg.member_group_id > ${after}::uuid`;
    const { rows } = await sql<Member>`
      (select u.identity_id as value, 'User' as type, i.user_name as display
        from group_user_members u join identities i on i.id = u.identity_id
        where u.organization_id = ${orgId} and u.group_id = ${groupId} ${userFrom}
        order by u.identity_id limit ${size})
      union all
      (select gg.member_group_id, 'Group', g.display_name
        from group_group_members gg join directory_groups g on g.id = gg.member_group_id
        where gg.organization_id = ${orgId} and gg.group_id = ${groupId} ${groupFrom}
        order by gg.member_group_id limit ${size})
      order by value limit ${size}`.execute(db);
    const last = rows[rows.length - 1];
    if (last === undefined) return;
    yield rows;
    if (rows.length < size) return;
    after = last.value;
  }
}
