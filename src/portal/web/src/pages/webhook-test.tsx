import { useState } from "preact/hooks";
import { type Connection, call, enc } from "../api.js";
import { useAction } from "../ui.js";

/**
 * "Send test event": queues one `webhook.test` event, delivered (signed, retried, logged) like any event; the result
 * or the error shows next to the button. It needs a saved URL and secret, so it is disabled with a hint otherwise.
 */
export function SendTestEvent({ conn }: { conn: Connection }) {
  const action = useAction();
  const [queued, setQueued] = useState<string | undefined>();
  const missing =
    conn.webhook === null
      ? "Save a webhook URL first."
      : conn.webhook.secret_set !== true
        ? "Save the webhook with a secret first."
        : undefined;
  const hintId = `test-event-hint-${conn.client_id}`;
  return (
    <div class="form-end test-event">
      <button
        type="button"
        class="secondary"
        disabled={action.busy || missing !== undefined}
        aria-describedby={hintId}
        onClick={() =>
          action.run(async () => {
            setQueued(undefined);
            const r = await call<{ event_id: string }>("POST", `/scimClients/${enc(conn.client_id)}:sendTestEvent`);
            setQueued(r.event_id);
          })
        }
      >
        Send test event
      </button>
      <span id={hintId} class="hint">
        {missing ?? "Sends a webhook.test event; its delivery shows under Webhook events."}
      </span>
      {action.error !== undefined ? (
        <span class="error" role="alert">
          {action.error}
        </span>
      ) : queued !== undefined ? (
        <span role="status">
          Test event queued: <span class="mono">{queued}</span>
        </span>
      ) : null}
    </div>
  );
}
