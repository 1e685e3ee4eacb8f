import { useState } from "preact/hooks";
import { type AdminToken, call, enc } from "../api.js";
import { RowButton, SelectField, TextField, ActionForm, SubmitRow } from "../fields.js";
import { usePagedList } from "../paged.js";
import { ConfirmDelete } from "../confirm.js";
import { ErrorNote, ListStatus, OnceSecret, Pager, Time, useAction } from "../ui.js";

const DAY_MS = 86_400_000;
const ROLES = [
  ["viewer", "viewer: read only"],
  ["admin", "admin: everything"],
] as const;
const EXPIRY: readonly [string, string][] = [
  ["", "never"],
  ["30", "in 30 days"],
  ["90", "in 90 days"],
  ["365", "in a year"],
];

/** Named admin tokens: an `admin` can do everything, a `viewer` only read (and verify API keys). */
export function AdminTokensPage() {
  const [fresh, setFresh] = useState<AdminToken | undefined>();
  const [revoking, setRevoking] = useState<AdminToken | undefined>();
  const { pager, list, items: tokens } = usePagedList<AdminToken>("/adminTokens", "admin_tokens");
  return (
    <section>
      <h1>Admin tokens</h1>
      <p class="lead">
        Named tokens for people and tools that use the admin API or this portal, each revocable on its own. A viewer
        token reads everything and verifies API keys, and changes nothing. The token Roster was started with is not
        listed here.
      </p>
      <CreateToken
        onCreated={(t) => {
          setFresh(t);
          list.reload();
        }}
      />
      {fresh?.token === undefined ? null : (
        <OnceSecret label={`Token of ${fresh.name}`} value={fresh.token}>
          Give it to whoever uses it; it signs in here or goes in an Authorization: Bearer header.
        </OnceSecret>
      )}
      <ListStatus load={list} what="admin tokens" items={tokens} emptyTitle="No named admin tokens">
        Create one above, for example a viewer token for a dashboard.
      </ListStatus>
      <ul class="cards" aria-label="Admin tokens">
        {tokens.map((t) => (
          <li class="card row" key={t.id}>
            <div class="row-main">
              <span class="row-title">{t.name}</span>{" "}
              <span class={`badge ${t.state === "ACTIVE" ? "ok" : "bad"}`}>{t.state.toLowerCase()}</span>{" "}
              <span class="badge">{t.role}</span>
              <span class="small muted">
                created <Time iso={t.create_time} /> · last used{" "}
                {t.last_used_time === null ? "never" : <Time iso={t.last_used_time} />}
                {t.expire_time === null ? null : (
                  <>
                    {" "}
                    · expires <Time iso={t.expire_time} />
                  </>
                )}
                {t.revoke_time === null ? null : (
                  <>
                    {" "}
                    · revoked <Time iso={t.revoke_time} />
                  </>
                )}
              </span>
            </div>
            {t.state === "REVOKED" ? null : (
              <div class="row-actions">
                <RowButton label={`Revoke ${t.name}`} danger onClick={() => setRevoking(t)}>
                  Revoke
                </RowButton>
              </div>
            )}
          </li>
        ))}
      </ul>
      <Pager pager={pager} nextToken={list.data?.next_page_token} />
      {revoking === undefined ? null : (
        <ConfirmDelete
          title={`Revoke ${revoking.name}?`}
          confirmLabel="Revoke token"
          path={`/adminTokens/${enc(revoking.id)}`}
          onDeleted={list.reload}
          onClose={() => setRevoking(undefined)}
        >
          <p>Every request with this token is refused from now on, on every Roster instance. Revocation is final.</p>
        </ConfirmDelete>
      )}
    </section>
  );
}

function CreateToken({ onCreated }: { onCreated: (t: AdminToken) => void }) {
  const [name, setName] = useState("");
  const [role, setRole] = useState<"admin" | "viewer">("viewer");
  const [days, setDays] = useState("90");
  const action = useAction();
  const create = () =>
    action.run(async () => {
      const created = await call<AdminToken>("POST", "/adminTokens", {
        name: name.trim(),
        role,
        ...(days === "" ? {} : { expire_time: new Date(Date.now() + Number(days) * DAY_MS).toISOString() }),
      });
      setName("");
      onCreated(created);
    });
  return (
    <ActionForm class="card grid-form" aria-label="Create an admin token" onSubmit={create}>
      <TextField
        label="Token name"
        hint="Who or what uses it, e.g. grafana or jane@ops."
        value={name}
        onInput={setName}
        required
        maxLength={256}
      />
      <SelectField label="Role" value={role} options={ROLES} onChange={setRole} />
      <SelectField label="Expires" value={days} options={EXPIRY} onChange={setDays} />
      <SubmitRow label="Create token" busy={action.busy} span />
      <ErrorNote error={action.error} />
    </ActionForm>
  );
}
