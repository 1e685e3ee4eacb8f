/**
 * Where the directory's repositories write their events: storage writes an event and its outbox row together
 * (storage/event-store.ts), whatever part of the domain made it.
 */
export {
  publishEvents as eventWrites,
  type RecordEvents,
  transactionWithEvents,
  writeEvents,
} from "../storage/event-store.js";
