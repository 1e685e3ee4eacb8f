import { useState } from "preact/hooks";
import { type Connection, call, enc } from "../api.js";
import { Confirm } from "../confirm.js";
import { ErrorNote, Time, useAction } from "../ui.js";

type Decision = "release" | "discard";

/**
 * The connection's deprovisioning guard: its limits and an on/off switch, and while it holds, a banner with the
 * count and a sample of held users and the two ways to end the hold, each confirmed with the count it acts on.
 */
export function DeprovisioningGuardPanel({ conn, onChanged }: { conn: Connection; onChanged: () => void }) {
  const g = conn.deprovisioning_guard;
  const [asking, setAsking] = useState<Decision | undefined>();
  const toggle = useAction();
  if (g === undefined) return null;
  const path = `/scimClients/${enc(conn.client_id)}`;
  const decide = async (d: Decision) => {
    await call("POST", `${path}/deprovisioningGuard:${d}`, { confirm_count: g.held_events });
    onChanged();
  };
  const minutes = Math.round(g.window_seconds / 60);
  return (
    <>
      {g.state === "HOLDING" ? (
        <div class="banner warning" role="alert" aria-label="Deprovisioning held">
          <h2>Deprovisioning held</h2>
          <p>
            Since <Time iso={g.tripped_time} />, this connection deactivated or deleted more users than its guard
            allows. Roster answered the identity provider as usual but holds <strong>{g.held_events} events</strong> of{" "}
            <strong>{g.held_users} users</strong>: the application has not been told, and their API keys still work.
          </p>
          <p class="small">
            Held users, a sample: {g.held_sample.map((u) => (u.email === "" ? u.id : u.email)).join(", ")}
            {g.held_users > g.held_sample.length ? ", …" : ""}
          </p>
          <div class="actions">
            <button type="button" class="danger" onClick={() => setAsking("release")}>
              Release {g.held_events} events
            </button>
            <button type="button" class="secondary" onClick={() => setAsking("discard")}>
              Discard {g.held_events} events
            </button>
          </div>
        </div>
      ) : null}
      {asking === undefined ? null : (
        <Confirm
          title={asking === "release" ? "Release held deprovisioning" : "Discard held deprovisioning"}
          confirmLabel={asking === "release" ? `Release ${g.held_events} events` : `Discard ${g.held_events} events`}
          onConfirm={() => decide(asking)}
          onClose={() => setAsking(undefined)}
        >
          {asking === "release" ? (
            <p>
              Send the {g.held_events} held events of {g.held_users} users to the application in their order, and
              suspend or revoke those users' API keys.
            </p>
          ) : (
            <p>
              Drop the {g.held_events} held events. {g.held_users_still_inactive} of the {g.held_users} held users are
              still inactive or deleted in the directory: the application will not hear of them from Roster.
            </p>
          )}
        </Confirm>
      )}
      <p class="small">
        Deprovisioning guard: {g.enabled ? "on" : "off"}
        {g.enabled
          ? ` — holds when more than ${g.share_percent} % of active users and ${g.min_count} users are
          deprovisioned within ${minutes} minutes (${g.window_count} so far)`
          : ""}
        .{" "}
        <button
          type="button"
          class="link"
          disabled={toggle.busy}
          onClick={() =>
            toggle.run(async () => {
              await call("PATCH", `${path}/deprovisioningGuard`, { enabled: !g.enabled });
              onChanged();
            })
          }
        >
          {g.enabled ? "Switch off" : "Switch on"}
        </button>
      </p>
      <ErrorNote error={toggle.error} />
    </>
  );
}
