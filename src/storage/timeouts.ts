/**
 * Every wait on the database is bounded, so an outage fails a request instead of holding it: a connection attempt
 * (the pool's wait for a free connection included), a statement (`statement_timeout` on the server, and the same
 * plus a margin on the client, for a server that no longer answers at all), and a transaction left idle by a
 * stalled client (`idle_in_transaction_session_timeout`, which frees its locks). 0 turns a bound off.
 */
export interface DatabaseTimeouts {
  readonly connectMs: number;
  readonly statementMs: number;
  readonly idleInTransactionMs: number;
}

export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {
  connectMs: 5_000,
  statementMs: 30_000,
  idleInTransactionMs: 60_000,
};
