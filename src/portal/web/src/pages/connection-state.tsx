import { useEffect } from "preact/hooks";
import type { Connection } from "../api.js";
import { Time } from "../ui.js";

/** How often a page waiting for a connection's first request asks again. */
const RECHECK_MS = 10_000;

/** Connected once its first SCIM request succeeded (the `connection.activated` event's moment). */
export function StateBadge({ conn }: { conn: Connection }) {
  return conn.activated_time === null ? (
    <span class="badge warn">Waiting for the first request</span>
  ) : (
    <span class="badge ok">Connected</span>
  );
}

/**
 * Whether the identity provider has reached Roster yet, for the person setting it up: while it has not, the page asks
 * again every few seconds, and "Check again" asks at once.
 */
export function ConnectionState({ conn, onCheck }: { conn: Connection; onCheck: () => void }) {
  const waiting = conn.activated_time === null;
  useEffect(() => {
    if (!waiting) return;
    const timer = setInterval(onCheck, RECHECK_MS);
    return () => clearInterval(timer);
  }, [waiting, onCheck]);
  return (
    <div class={waiting ? "card state" : "card state ok"} role="status">
      <StateBadge conn={conn} />
      {waiting ? (
        <>
          <p>
            Roster has not had a successful request from your identity provider yet. Enter the values below in its
            console, save, and run its connection test.
          </p>
          <button type="button" class="secondary small" onClick={onCheck}>
            Check again
          </button>
        </>
      ) : (
        <p>
          Your identity provider is connected: its first successful request arrived <Time iso={conn.activated_time} />.
        </p>
      )}
    </div>
  );
}
