import type { Db } from "./database.js";

/** Instance-wide settings rows (e.g. the admin token hash), shared by every process on one database. */
export async function getSetting(db: Db, key: string): Promise<string | undefined> {
  const row = await db.selectFrom("instance_settings").select("value").where("key", "=", key).executeTakeFirst();
  return row?.value;
}

/** Inserts unless present; returns the value that won (several instances may start at once). */
export async function putSettingIfAbsent(db: Db, key: string, value: string): Promise<string> {
  await db
    .insertInto("instance_settings")
    .values({ key, value })
    .onConflict((oc) => oc.column("key").doNothing())
    .execute();
  return (await getSetting(db, key)) ?? value;
}

export async function putSetting(db: Db, key: string, value: string): Promise<void> {
  await db
    .insertInto("instance_settings")
    .values({ key, value })
    .onConflict((oc) => oc.column("key").doUpdateSet({ value }))
    .execute();
}
