import type { Clock } from "../../platform/clock.js";
import type { Logger } from "../../platform/logger.js";
import { batchMayDeprovision, type OutboxBatch, claimSpared } from "../events.js";
import type { GuardRepo } from "./repo.js";
import type { DiscardResult, GuardSettings, GuardState, ReleaseResult } from "./types.js";

/** Events published per release statement: a crash loses no more than one batch's progress, never its order. */
export const RELEASE_BATCH = 500;

/** What a release or discard answers when `confirmCount` is not the number held now. */
export interface CountMismatch {
  readonly mismatch: true;
  readonly held: number;
}

/**
 * The deprovisioning guard of a connection (docs/deprovisioning.md): its settings, its state, and an admin's end of
 * a hold. Whether a change is held is decided where its events are written (storage/event-guard.ts), in PostgreSQL, so every
 * instance agrees; this service reads that state and ends it.
 */
export class DeprovisioningGuardService {
  readonly #repo: GuardRepo;
  readonly #clock: Clock;
  readonly #logger: Logger;

  constructor(repo: GuardRepo, clock: Clock, logger: Logger) {
    this.#repo = repo;
    this.#clock = clock;
    this.#logger = logger;
  }

  state(clientId: string): Promise<GuardState> {
    return this.#repo.state(clientId, this.#clock.now());
  }

  async configure(clientId: string, settings: GuardSettings): Promise<GuardState> {
    await this.#repo.configure(clientId, settings);
    return this.state(clientId);
  }

  /**
   * Publishes every held event in order, in batches, then ends the hold. Idempotent: a release interrupted by a
   * crash is finished by the next one (whose count is what is left).
   */
  async release(clientId: string, confirmCount: number): Promise<ReleaseResult | CountMismatch> {
    const held = await this.#repo.heldCount(clientId);
    if (held !== confirmCount) return { mismatch: true, held };
    let released = 0;
    for (;;) {
      const n = await this.#repo.releaseBatch(clientId, RELEASE_BATCH, this.#clock.now());
      released += n;
      if (n < RELEASE_BATCH && (await this.#repo.untripIfEmpty(clientId))) break;
    }
    this.#logger.info({ client_id: clientId, released }, "held deprovisioning released");
    return { released };
  }

  /** Drops every held event and ends the hold; answers how many held users stay inactive or deleted. */
  async discard(clientId: string, confirmCount: number): Promise<DiscardResult | CountMismatch> {
    const before = await this.state(clientId);
    if (before.heldEvents !== confirmCount) return { mismatch: true, held: before.heldEvents };
    let discarded = await this.#repo.discard(clientId, this.#clock.now());
    while (!(await this.#repo.untripIfEmpty(clientId))) {
      discarded += await this.#repo.discard(clientId, this.#clock.now());
    }
    this.#logger.info({ client_id: clientId, discarded }, "held deprovisioning discarded");
    return { discarded, heldUsersStillInactive: before.heldUsersStillInactive };
  }

  /**
   * After a committed change: one WARN line per trip, written by the one instance that claims it. Only a batch the
   * guard counts can trip it, and not one its statement spared: every other write skips the claim's round trip.
   */
  async afterCommit(batch: OutboxBatch): Promise<void> {
    if (batch.directoryId === null || !batchMayDeprovision(batch) || claimSpared(batch)) return;
    const tripped = await this.#repo.claimTripWarning(batch.directoryId);
    if (tripped === undefined) return;
    this.#logger.warn(
      { client_id: batch.directoryId, organization_id: batch.organizationId, tripped_time: tripped.toISOString() },
      "deprovisioning guard tripped: the connection's further deactivations and deletions are held until an admin releases or discards them",
    );
  }

  totals(): Promise<{ tripped: number; held: number }> {
    return this.#repo.totals();
  }
}
