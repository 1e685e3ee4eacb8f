import { useState } from "preact/hooks";
import { type Connection, call, enc } from "../api.js";
import { useLocation } from "../router.js";
import { oneTime } from "../secrets.js";
import { Confirm, CopyField, Field, randomSecret } from "../ui.js";
import { type GuideValue, IDPS, type IdpKey, isIdpKey } from "./idps.js";

export function SetupGuide({ conn }: { conn: Connection }) {
  const loc = useLocation();
  const fromUrl = loc.query.get("idp");
  const [idp, setIdp] = useState<IdpKey>(isIdpKey(fromUrl) ? fromUrl : "okta");
  const [secret, setSecret] = useState(oneTime.get(conn.client_id));
  const guide = IDPS[idp];
  const fieldValue = (v: GuideValue) =>
    v.kind === "baseUrl" ? conn.scim_base_url : v.kind === "literal" ? v.text : secret;
  return (
    <>
      <h2>Set up {guide.name}</h2>
      <Field label="Identity provider">
        {(id) => (
          <select id={id} value={idp} onChange={(e) => setIdp(e.currentTarget.value as IdpKey)}>
            {Object.entries(IDPS).map(([key, p]) => (
              <option key={key} value={key}>
                {p.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <ol class="steps">
        {guide.where.map((s) => (
          <li key={s}>{s}</li>
        ))}
      </ol>
      <section class="card guide" aria-label={`${guide.name} fields`}>
        {guide.fields.map((f) => {
          const value = fieldValue(f.value);
          if (value === undefined) {
            return (
              <div class="copy-field" key={f.label}>
                <p class="label">{f.label}</p>
                <p class="hint">
                  The secret was shown once, when it was generated; Roster keeps only its hash. Lost it? Generate a new
                  one below; the old one stops working at once.
                </p>
              </div>
            );
          }
          return (
            <CopyField
              key={f.label}
              label={f.label}
              value={value}
              {...(f.note === undefined ? {} : { note: f.note })}
            />
          );
        })}
        {secret !== undefined ? (
          <p class="hint warn-text" role="status">
            <strong>Copy the secret now:</strong> it is shown only on this page and is gone after a reload.
          </p>
        ) : null}
      </section>
      <RegenerateSecret
        conn={conn}
        onNew={(s) => {
          oneTime.put(conn.client_id, s);
          setSecret(s);
        }}
      />
      <h3>Then</h3>
      <ul class="steps">
        {guide.after.map((s) => (
          <li key={s}>{s}</li>
        ))}
      </ul>
    </>
  );
}

/** Today one secret is live per connection: a new one replaces the old at once. */
function RegenerateSecret({ conn, onNew }: { conn: Connection; onNew: (secret: string) => void }) {
  const [confirming, setConfirming] = useState(false);
  return (
    <div class="actions">
      <button type="button" class="secondary" onClick={() => setConfirming(true)}>
        Generate a new SCIM secret
      </button>
      {confirming ? (
        <Confirm
          title="Generate a new SCIM secret?"
          confirmLabel="Replace the secret"
          onClose={() => setConfirming(false)}
          onConfirm={async () => {
            const secret = `scim_${randomSecret(32)}`;
            await call("PATCH", `/scimClients/${enc(conn.client_id)}?update_mask=secret`, { secret });
            onNew(secret);
          }}
        >
          <p>
            The current secret stops working immediately: the identity provider gets 401 until you paste the new secret
            into its console.
          </p>
        </Confirm>
      ) : null}
    </div>
  );
}
