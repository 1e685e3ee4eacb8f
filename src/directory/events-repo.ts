import type { Transaction } from "kysely";
import type { Db } from "../storage/database.js";
import type { EventSink } from "../storage/event-port.js";
import type { RecordEvents } from "../storage/event-store.js";
import { transactionWithEvents as storeTransaction } from "../storage/event-store.js";
import type { Database } from "../storage/schema.js";
import { rethrowClientGone } from "./scim-clients/gone-repo.js";

/**
 * Where the directory's repositories write their events: storage writes an event and its outbox row together
 * (storage/event-store.ts), whatever part of the domain made it. What the directory adds is its own refusal: a write
 * that raced the deletion of its SCIM client fails with ClientGoneError.
 */
export { publishEvents as eventWrites, writeEvents } from "../storage/event-store.js";
export type { RecordEvents } from "../storage/event-store.js";
export { claimSparedColumn, heldColumn } from "../storage/event-guard.js";
export { markClaimSpared } from "../storage/event-port.js";

/** Runs `work` in a transaction whose events `record` writes, and announces them to `sink` once it committed. */
export function transactionWithEvents<T>(
  db: Db,
  sink: EventSink,
  work: (trx: Transaction<Database>, record: RecordEvents) => Promise<T>,
): Promise<T> {
  return storeTransaction(db, sink, work).catch(rethrowClientGone);
}
