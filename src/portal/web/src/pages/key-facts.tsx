import type { ApiKey } from "../api.js";
import { Time } from "../ui.js";

export function KeyFacts({ k }: { k: ApiKey }) {
  return (
    <span class="small muted">
      {k.prefix === undefined ? null : <span class="mono">{k.prefix}… · </span>}
      {k.actor_id === null ? "" : `actor ${k.actor_id} · `}
      {k.scopes.length === 0 ? "no scopes" : `scopes ${k.scopes.join(", ")}`} · created <Time iso={k.create_time} />
      {k.expire_time === null ? null : (
        <>
          {" "}
          · expires <Time iso={k.expire_time} />
        </>
      )}
      {k.state === "SUSPENDED" ? (
        <span class="block">
          Suspended: the identity it acts for is inactive in the directory, so verification answers ACTOR_INACTIVE until
          the identity provider reactivates that person.
        </span>
      ) : null}
      {k.state === "REVOKED" && k.revoke_reason === "ACTOR_DELETED" ? (
        <span class="block">Revoked because the identity it acted for was deleted.</span>
      ) : null}
    </span>
  );
}

const BADGE: Record<ApiKey["state"], string> = { ACTIVE: "ok", SUSPENDED: "warn", EXPIRED: "bad", REVOKED: "bad" };

export const stateBadge = (k: ApiKey) => (
  <span class={`badge ${BADGE[k.state] ?? "bad"}`}>{k.state.toLowerCase()}</span>
);
