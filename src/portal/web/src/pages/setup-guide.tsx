import { useState } from "preact/hooks";
import { type AuthMethod, type Connection, call, enc } from "../api.js";
import { useLocation } from "../router.js";
import { oneTime } from "../secrets.js";
import { SelectField } from "../fields.js";
import { Confirm } from "../confirm.js";
import { CopyField, ErrorNote, Time, TimeFact, useAction } from "../ui.js";
import { type GuideValue, IDP_OPTIONS, IDPS, type Idp, type IdpKey, isIdpKey } from "./idps.js";

export function SetupGuide({ conn, onChanged }: { conn: Connection; onChanged: () => void }) {
  const loc = useLocation();
  const fromUrl = loc.query.get("idp");
  const [idp, setIdp] = useState<IdpKey>(isIdpKey(fromUrl) ? fromUrl : "okta");
  const [secret, setSecret] = useState(oneTime.get(conn.client_id));
  const [authLabel, setAuthLabel] = useState("");
  const guide: Idp = IDPS[idp];
  const alternative = guide.alternatives?.find((a) => a.label === authLabel);
  const fields =
    alternative === undefined ? guide.fields : [...guide.fields.filter((f) => f.auth !== true), ...alternative.fields];
  const fieldValue = (v: GuideValue) => {
    switch (v.kind) {
      case "baseUrl":
        return conn.scim_base_url;
      case "clientId":
        return conn.basic_username;
      case "tokenUrl":
        return conn.oauth_token_url;
      case "literal":
        return v.text;
      case "secret":
        return secret;
    }
  };
  return (
    <>
      <h2>Set up {guide.name}</h2>
      <BaseUrlNotice url={conn.scim_base_url} />
      <SelectField
        label="Identity provider"
        value={idp}
        options={IDP_OPTIONS}
        onChange={(key) => {
          setIdp(key);
          setAuthLabel("");
        }}
      />
      {guide.alternatives === undefined ? null : (
        <SelectField
          label="Authentication"
          value={authLabel}
          options={[
            ["", guide.defaultAuth ?? "Bearer token"],
            ...guide.alternatives.map((a) => [a.label, a.label] as const),
          ]}
          onChange={setAuthLabel}
        />
      )}
      {alternative === undefined || conn.authentication_methods.includes(alternative.method) ? null : (
        <AcceptMethod conn={conn} method={alternative.method} label={alternative.label} onChanged={onChanged} />
      )}
      <ol class="steps">
        {guide.where.map((s) => (
          <li key={s}>{s}</li>
        ))}
      </ol>
      <section class="card guide" aria-label={`${guide.name} fields`}>
        {fields.map((f) => {
          const value = fieldValue(f.value);
          if (value === undefined) {
            return (
              <div class="copy-field" key={f.label}>
                <p class="label">{f.label}</p>
                <p class="hint">
                  The secret was shown once, when it was generated; Roster keeps only its hash. Lost it? Rotate it
                  below, with time for the identity provider to switch over.
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
      <RotateSecret
        conn={conn}
        onNew={(s) => {
          oneTime.put(conn.client_id, s);
          setSecret(s);
          onChanged();
        }}
      />
      <h3>Then</h3>
      <ul class="steps">
        {guide.after.map((s) => (
          <li key={s}>{s}</li>
        ))}
      </ul>
      {idp === "generic" ? <StrictClients conn={conn} onChanged={onChanged} /> : null}
    </>
  );
}

/** Turns on a way of authenticating the chosen console setting needs; the connection refuses it until then. */
function AcceptMethod(props: { conn: Connection; method: AuthMethod; label: string; onChanged: () => void }) {
  const { conn, method } = props;
  const { busy, error, run } = useAction();
  return (
    <div class="card warn" role="status">
      <p>
        This connection does not accept {props.label} yet: the identity provider's requests would get 401 until it does.
      </p>
      <button
        type="button"
        disabled={busy}
        onClick={() =>
          run(async () => {
            await call("PATCH", `/scimClients/${enc(conn.client_id)}?update_mask=authentication_methods`, {
              authentication_methods: [...conn.authentication_methods, method],
            });
            props.onChanged();
          })
        }
      >
        Accept {props.label}
      </button>
      <ErrorNote error={error} />
    </div>
  );
}

/**
 * Some SCIM client libraries (python's scim2-client among them) refuse a ServiceProviderConfig with RFC 9865's
 * pagination block; the connection can leave it out.
 */
function StrictClients({ conn, onChanged }: { conn: Connection; onChanged: () => void }) {
  const { busy, error, run } = useAction();
  const on = conn.service_provider_config_pagination;
  return (
    <div class="card">
      <h3>Strict client libraries</h3>
      <p>
        The ServiceProviderConfig {on ? "includes" : "leaves out"} the cursor pagination block (RFC 9865). Leave it out
        for libraries that refuse attributes RFC 7643 does not name, such as python's scim2-client.
      </p>
      <button
        type="button"
        class="secondary"
        disabled={busy}
        onClick={() =>
          run(async () => {
            await call("PATCH", `/scimClients/${enc(conn.client_id)}?update_mask=service_provider_config_pagination`, {
              service_provider_config_pagination: !on,
            });
            onChanged();
          })
        }
      >
        {on ? "Leave the pagination block out" : "Include the pagination block"}
      </button>
      <ErrorNote error={error} />
    </div>
  );
}

const GRACE: readonly [string, string][] = [
  ["0", "no time: stop it now (leaked secret)"],
  ["3600", "1 hour"],
  ["86400", "24 hours"],
  ["604800", "7 days"],
];

/**
 * A new server-generated secret; during the grace period the replaced one keeps working too (at most two are live),
 * so the identity provider can be switched over without failed pushes.
 */
function RotateSecret({ conn, onNew }: { conn: Connection; onNew: (secret: string) => void }) {
  const [confirming, setConfirming] = useState(false);
  const [grace, setGrace] = useState("86400");
  return (
    <div class="card">
      <h3>Rotate the SCIM secret</h3>
      {conn.previous_secret_expire_time !== null ? (
        <dl class="facts" aria-label="Previous secret">
          <TimeFact term="Rotated" iso={conn.secret_rotate_time} />
          <TimeFact term="Previous secret accepted until" iso={conn.previous_secret_expire_time} />
          <dt>Previous secret last used</dt>
          <dd>
            {conn.previous_secret_last_used_time === null ? (
              "not since the rotation"
            ) : (
              <Time iso={conn.previous_secret_last_used_time} />
            )}
          </dd>
        </dl>
      ) : null}
      <div class="inline-form">
        <SelectField label="The current secret keeps working for" value={grace} options={GRACE} onChange={setGrace} />
        <button type="button" class="secondary" onClick={() => setConfirming(true)}>
          Rotate secret
        </button>
      </div>
      {confirming ? (
        <Confirm
          title="Rotate the SCIM secret?"
          confirmLabel="Rotate secret"
          onClose={() => setConfirming(false)}
          onConfirm={async () => {
            const out = await call<Connection>("POST", `/scimClients/${enc(conn.client_id)}:rotateSecret`, {
              grace_period: `${grace}s`,
            });
            if (out.secret !== undefined) onNew(out.secret);
          }}
        >
          {grace === "0" ? (
            <p>
              The current secret stops working immediately: the identity provider gets 401 until you paste the new
              secret into its console.
            </p>
          ) : (
            <p>
              Roster generates a new secret and accepts both for the chosen time. Paste the new one into the identity
              provider's console before it ends; an earlier previous secret stops now.
            </p>
          )}
        </Confirm>
      ) : null}
    </div>
  );
}

/** What keeps an IdP from using this SCIM base URL (a loopback host, plain HTTP), and what the operator sets. */
export function baseUrlProblems(url: string): string[] {
  if (!URL.canParse(url)) return [];
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const loopback =
    host === "localhost" ||
    host.endsWith(".localhost") ||
    /^127\./.test(host) ||
    host === "0.0.0.0" ||
    host === "::1" ||
    host === "::";
  const problems: string[] = [];
  if (loopback) problems.push("it is a loopback address, which no identity provider outside this machine can reach");
  if (parsed.protocol === "http:") problems.push("it is plain HTTP, and Okta and Entra accept only HTTPS");
  return problems;
}

function BaseUrlNotice({ url }: { url: string }) {
  const problems = baseUrlProblems(url);
  if (problems.length === 0) return null;
  return (
    <div class="warning" role="alert">
      <p>
        <strong>An identity provider cannot use this SCIM base URL yet:</strong> {problems.join("; ")}.
      </p>
      <p class="hint">
        Whoever runs Roster sets <code>ROSTER_PUBLIC_URL</code> to the <code>https://</code> address the identity
        provider reaches, and serves HTTPS there: with <code>ROSTER_TLS_CERT</code> and <code>ROSTER_TLS_KEY</code>, or
        behind a TLS reverse proxy (<code>ROSTER_TRUST_PROXY</code>). See docs/deploying.md.
      </p>
    </div>
  );
}
