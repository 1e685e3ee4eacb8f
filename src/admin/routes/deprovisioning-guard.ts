import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { DeprovisioningGuardService } from "../../directory/deprovisioning-guard/service.js";
import { DEFAULT_GUARD, type GuardSettings, type GuardState } from "../../directory/deprovisioning-guard/types.js";
import type { ScimClientService } from "../../directory/scim-clients/service.js";
import { AdminError, notFound } from "../errors.js";
import { GUARD_MASK_PATHS, GuardSettingsBody, type GuardSettingsPatch } from "../schemas/deprovisioning-guard.js";
import { errors } from "../schemas/kit.js";
import type { FieldUpdate } from "../update-mask.js";

const Params = Type.Object({ clientId: Type.String() });
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

/** `patch`'s fields over `now`; fields absent stay. */
const merged = (now: GuardSettings, patch: GuardSettingsPatch): GuardSettings => ({
  enabled: patch.enabled ?? now.enabled,
  sharePercent: patch.share_percent ?? now.sharePercent,
  minCount: patch.min_count ?? now.minCount,
  windowSeconds: patch.window_seconds ?? now.windowSeconds,
});

/**
 * The guard's settings after the `deprovisioning_guard` fields of a SCIM client PATCH (update mask semantics, as
 * the resource's other sub-objects): naming the sub-object replaces it whole (fields it leaves out take their
 * defaults), naming a field sets it (an empty value is its default); the updates of other fields are ignored.
 */
export function guardAfterUpdates(now: GuardSettings, updates: readonly FieldUpdate[]): GuardSettings | undefined {
  let settings: GuardSettings | undefined;
  for (const { path, value } of updates) {
    if (path === "deprovisioning_guard") settings = merged(DEFAULT_GUARD, (value ?? {}) as GuardSettingsPatch);
    else if ((GUARD_MASK_PATHS as readonly string[]).includes(path)) {
      const field = path.slice("deprovisioning_guard.".length) as keyof GuardSettingsPatch;
      settings = merged(settings ?? now, { [field]: value ?? DEFAULT_PATCH[field] });
    }
  }
  return settings;
}

const DEFAULT_PATCH: Required<GuardSettingsPatch> = {
  enabled: DEFAULT_GUARD.enabled,
  share_percent: DEFAULT_GUARD.sharePercent,
  min_count: DEFAULT_GUARD.minCount,
  window_seconds: DEFAULT_GUARD.windowSeconds,
};

const mismatch = (held: number) =>
  new AdminError("ABORTED", `confirm_count must equal the number of events held now: ${held}`);

/**
 * The deprovisioning guard of a connection: `GET`/`PATCH /scimClients/{id}/deprovisioningGuard`, and the two ways an
 * admin ends a hold (`…/deprovisioningGuard:release`, `…:discard`), each confirmed by the count it acts on (409
 * ABORTED when that count is no longer true).
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
  scope.patch<ByClient & { Body: Static<typeof GuardSettingsBody> }>(
    "/scimClients/:clientId/deprovisioningGuard",
    { schema: { ...schema, body: GuardSettingsBody } },
    async (req) => {
      await known(req.params.clientId);
      const now = await deps.guard.state(req.params.clientId);
      const state = await deps.guard.configure(req.params.clientId, merged(now, req.body));
      return guardJson(state);
    },
  );

  const confirmed = { schema: { ...schema, body: ConfirmBody } };
  type Confirmed = ByClient & { Body: Static<typeof ConfirmBody> };
  const release = async (req: FastifyRequest<Confirmed>) => {
    await known(req.params.clientId);
    const result = await deps.guard.release(req.params.clientId, req.body.confirm_count);
    if ("mismatch" in result) throw mismatch(result.held);
    return { released: result.released };
  };
  const discard = async (req: FastifyRequest<Confirmed>) => {
    await known(req.params.clientId);
    const result = await deps.guard.discard(req.params.clientId, req.body.confirm_count);
    if ("mismatch" in result) throw mismatch(result.held);
    return { discarded: result.discarded, held_users_still_inactive: result.heldUsersStillInactive };
  };
  // Each action has two spellings: a custom method of the guard (its documented form) and one of the connection.
  scope.post<Confirmed>("/scimClients/:clientId/deprovisioningGuard::release", confirmed, release);
  scope.post<Confirmed>("/scimClients/:clientId([^:/]+)::releaseHeldDeprovisioning", confirmed, release);
  scope.post<Confirmed>("/scimClients/:clientId/deprovisioningGuard::discard", confirmed, discard);
  scope.post<Confirmed>("/scimClients/:clientId([^:/]+)::discardHeldDeprovisioning", confirmed, discard);
}
