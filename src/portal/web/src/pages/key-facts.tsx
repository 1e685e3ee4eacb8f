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
    </span>
  );
}

export const stateBadge = (k: ApiKey) => (
  <span class={`badge ${k.state === "ACTIVE" ? "ok" : "bad"}`}>{k.state.toLowerCase()}</span>
);
