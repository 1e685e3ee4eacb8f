import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { CountMismatch, DeprovisioningGuardService } from "../../directory/deprovisioning-guard/service.js";
import type { GuardState } from "../../directory/deprovisioning-guard/types.js";
import type { ScimClientService } from "../../directory/scim-clients/service.js";
import { AdminError, notFound } from "../errors.js";
import { errors } from "../schemas/kit.js";

const Params = Type.Object({ clientId: Type.String() });
const GuardBody = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: "Whether the guard holds mass deprovisioning (default true)" })),
    share_percent: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: "Percent of active users (default 20)" }),
    ),
    min_count: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_000_000, description: "Absolute count (default 50)" }),
    ),
    window_seconds: Type.Optional(
      Type.Integer({ minimum: 60, maximum: 604_800, description: "Rolling window (default 3600)" }),
    ),
  },
  { additionalProperties: false },
);
const ConfirmBody = Type.Object(
  { confirm_count: Type.Integer({ minimum: 0, description: "The number of events held now (held_events)" }) },
  { additionalProperties: false },
);

type ByClient = { Params: Static<typeof Params> };

export interface GuardRouteDeps {
  readonly scimClients: ScimClientService;
  readonly guard: DeprovisioningGuardService;
}

/** A guard's state as the admin API shows it (docs/deprovisioning.md). */
export const guardJson = (s: GuardState) => ({
  enabled: s.enabled,
  share_percent: s.sharePercent,
  min_count: s.minCount,
  window_seconds: s.windowSeconds,
  state: s.trippedTime === null ? "FLOWING" : "HOLDING",
  tripped_time: s.trippedTime?.toISOString() ?? null,
  window_count: s.windowCount,
  held_events: s.heldEvents,
  held_users: s.heldUsers,
  held_users_still_inactive: s.heldUsersStillInactive,
  held_sample: s.sample.map((u) => ({ id: u.id, email: u.email, event: u.event })),
});

const isMismatch = <R>(result: R | CountMismatch): result is CountMismatch =>
  typeof result === "object" && result !== null && "mismatch" in result;

const mismatch = (held: number) =>
  new AdminError("ABORTED", `confirm_count must equal the number of events held now: ${held}`);

/**
 * The deprovisioning guard of a connection: `GET`/`PATCH /scimClients/{id}/deprovisioningGuard`, and the two ways an
 * admin ends a hold, each confirmed by the count it acts on (409 ABORTED when that count is no longer true).
 */
export function registerGuardRoutes(scope: FastifyInstance, deps: GuardRouteDeps): void {
  const known = async (clientId: string) => {
    if ((await deps.scimClients.get(clientId)) === undefined) throw notFound(`SCIM client ${clientId} does not exist`);
  };
  const schema = { params: Params, response: errors };

  scope.get<ByClient>("/scimClients/:clientId/deprovisioningGuard", { schema }, async (req) => {
    await known(req.params.clientId);
    return guardJson(await deps.guard.state(req.params.clientId));
  });

  /** Fields present in the body change, the others stay. */
  scope.patch<ByClient & { Body: Static<typeof GuardBody> }>(
    "/scimClients/:clientId/deprovisioningGuard",
    { schema: { ...schema, body: GuardBody } },
    async (req) => {
      await known(req.params.clientId);
      const b = req.body;
      const now = await deps.guard.state(req.params.clientId);
      const state = await deps.guard.configure(req.params.clientId, {
        enabled: b.enabled ?? now.enabled,
        sharePercent: b.share_percent ?? now.sharePercent,
        minCount: b.min_count ?? now.minCount,
        windowSeconds: b.window_seconds ?? now.windowSeconds,
      });
      return guardJson(state);
    },
  );

  /** An end of a hold: it acts only on the count of events the admin confirms (409 ABORTED otherwise). */
  const endOfHold = <R>(
    action: string,
    act: (clientId: string, confirmCount: number) => Promise<R | CountMismatch>,
    answer: (result: R) => Record<string, number>,
  ) =>
    scope.post<ByClient & { Body: Static<typeof ConfirmBody> }>(
      `/scimClients/:clientId([^:/]+)::${action}`,
      { schema: { ...schema, body: ConfirmBody } },
      async (req) => {
        await known(req.params.clientId);
        const result = await act(req.params.clientId, req.body.confirm_count);
        if (isMismatch(result)) throw mismatch(result.held);
        return answer(result);
      },
    );

  endOfHold(
    "releaseHeldDeprovisioning",
    (id, count) => deps.guard.release(id, count),
    (r) => ({ released: r.released }),
  );
  endOfHold(
    "discardHeldDeprovisioning",
    (id, count) => deps.guard.discard(id, count),
    (r) => ({ discarded: r.discarded, held_users_still_inactive: r.heldUsersStillInactive }),
  );
}
