import { useState } from "preact/hooks";
import { type Connection, call, enc } from "../api.js";
import { ActionForm, SelectField, SubmitRow, TextField, useSave, CheckField } from "../fields.js";
import { OnceSecret } from "../ui.js";
import { SendTestEvent } from "./webhook-test.js";

type Retry = "none" | "backoff";
const RETRIES = [
  ["none", "None: a failed delivery stays failed (resend it by hand)"],
  ["backoff", "Backoff: up to 8 attempts over about a day"],
] as const;

export function WebhookSettings({ conn, onChanged }: { conn: Connection; onChanged: () => void }) {
  const [url, setUrl] = useState(conn.webhook?.url ?? "");
  const [retry, setRetry] = useState<Retry>(conn.webhook?.retry ?? "none");
  const [logEvents, setLogEvents] = useState(conn.log_webhook_events);
  const [generated, setGenerated] = useState<string | undefined>();
  const action = useSave();
  const secretSet = conn.webhook?.secret_set === true;
  const path = `/scimClients/${enc(conn.client_id)}`;
  const save = (withNewSecret: boolean) =>
    action.run(async () => {
      const trimmed = url.trim();
      // Roster generates the secret (it stores nothing until the PATCH below names it); the page only shows it once.
      const secret = withNewSecret
        ? (await call<{ secret: string }>("POST", `${path}:generateWebhookSecret`)).secret
        : undefined;
      const mask = [
        "webhook.url",
        "webhook.retry",
        "log_webhook_events",
        ...(secret === undefined ? [] : ["webhook.secret"]),
      ];
      const webhook = trimmed === "" ? null : { url: trimmed, retry, ...(secret === undefined ? {} : { secret }) };
      await call("PATCH", `${path}?update_mask=${mask.join(",")}`, { webhook, log_webhook_events: logEvents });
      if (secret !== undefined) setGenerated(secret);
      onChanged();
    });
  return (
    <ActionForm class="card" aria-labelledby="webhook-h" onSubmit={() => save(false)}>
      <h2 id="webhook-h">Webhook</h2>
      <p class="hint">
        Roster posts every directory change of this connection to this URL, signed with the webhook secret (Standard
        Webhooks headers).
      </p>
      <TextField
        label="Webhook URL"
        hint="http(s) URL of your endpoint; leave empty to send no webhooks."
        error={action.error}
        type="url"
        value={url}
        placeholder="https://app.example.com/webhooks/roster"
        onInput={setUrl}
      />
      <SelectField
        label="Retries"
        hint="With backoff, a failed delivery is tried again after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h; later events of the same user or group wait for it."
        value={retry}
        options={RETRIES}
        onChange={setRetry}
      />
      <CheckField checked={logEvents} onChange={setLogEvents}>
        Keep a log of every delivery attempt (shown under Webhook events, with resend)
      </CheckField>
      {conn.webhook !== null && !secretSet ? (
        <p class="warning" role="alert">
          This webhook URL has no secret: Roster never sends an unsigned webhook, so every delivery fails until you save
          it with a generated secret.
        </p>
      ) : null}
      {conn.webhook !== null && secretSet ? (
        <p class="small muted">A webhook secret is set (it is never shown again).</p>
      ) : null}
      <SubmitRow label="Save webhook" busy={action.busy} saved={action.saved}>
        <button type="button" class="secondary" disabled={action.busy || url.trim() === ""} onClick={() => save(true)}>
          {secretSet ? "Save with a new secret" : "Save with a generated secret"}
        </button>
      </SubmitRow>
      <SendTestEvent conn={conn} />
      {generated !== undefined ? (
        <OnceSecret label="Webhook secret" value={generated}>
          Configure it in your endpoint to verify the signature.
        </OnceSecret>
      ) : null}
    </ActionForm>
  );
}
