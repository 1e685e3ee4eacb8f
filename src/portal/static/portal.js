// The admin portal: a thin page over the admin API (DESIGN.md). The token stays in this tab's sessionStorage.
const API = "/v2alpha1/admin";
const $ = (id) => document.getElementById(id);
const EVENTS = [
  "user.created",
  "user.updated",
  "user.deleted",
  "group.created",
  "group.updated",
  "group.deleted",
  "group.user_added",
  "group.user_removed",
];
let org = null;
let client = null;

const token = () => sessionStorage.getItem("roster-admin-token") ?? "";
const status = (text, ok = true) => {
  $("status").textContent = text;
  $("status").className = ok ? "ok" : "fail";
};
const el = (tag, props = {}, ...children) => {
  const e = Object.assign(document.createElement(tag), props);
  for (const c of children) e.append(c);
  return e;
};

async function api(method, path, body) {
  const res = await fetch(API + path, {
    method,
    headers: {
      authorization: `Bearer ${token()}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(json.error?.message ?? `HTTP ${res.status}`);
  return json;
}

const guard =
  (fn) =>
  async (...args) => {
    try {
      await fn(...args);
    } catch (e) {
      status(e.message, false);
    }
  };

async function loadOrgs() {
  const { organizations } = await api("GET", "/organizations?page_size=1000");
  $("org-list").replaceChildren(
    ...organizations.map((o) =>
      el(
        "li",
        {},
        el("button", { className: "link", textContent: o.name, onclick: guard(() => openOrg(o)) }),
        ` ${o.id}`,
      ),
    ),
  );
  $("orgs").hidden = false;
}

async function openOrg(o) {
  org = o;
  $("org-name").textContent = o.name;
  $("clients").hidden = false;
  $("client").hidden = true;
  $("secret-once").hidden = true;
  const { scim_clients } = await api("GET", `/scimClients?organization_id=${o.id}&page_size=1000`);
  $("client-list").replaceChildren(
    ...scim_clients.map((c) =>
      el(
        "tr",
        {},
        el("td", {}, c.name || "(unnamed)", el("br"), el("code", { textContent: c.client_id })),
        el("td", {}, el("code", { textContent: c.scim_base_url })),
        el("td", { textContent: c.webhook ? c.webhook.url : "—" }),
        el("td", {}, el("button", { className: "link", textContent: "open", onclick: guard(() => openClient(c)) })),
      ),
    ),
  );
}

async function openClient(c) {
  client = c;
  $("client").hidden = false;
  $("client-id").textContent = c.client_id;
  const f = $("webhook");
  f.url.value = c.webhook?.url ?? "";
  f.secret.value = "";
  f.secret.placeholder = c.webhook?.secret_set ? "(set; leave empty to keep)" : "(not set)";
  f.tenant.value = c.tenant;
  f.product.value = c.product;
  f.log.checked = c.log_webhook_events;
  await loadEvents();
}

async function loadEvents() {
  const kind = $("event-kind").value;
  const success = $("event-success").value;
  const q = new URLSearchParams({
    page_size: "100",
    ...(kind ? { event: kind } : {}),
    ...(success ? { success } : {}),
  });
  const { webhook_events } = await api("GET", `/scimClients/${client.client_id}/webhookEvents?${q}`);
  $("event-list").replaceChildren(
    ...webhook_events.map((e) =>
      el(
        "tr",
        {},
        el("td", { textContent: new Date(e.attempt_time).toLocaleString() }),
        el("td", { textContent: e.event }),
        el("td", { className: e.success ? "ok" : "fail", textContent: e.status_code ?? e.error ?? "" }),
        el("td", { textContent: String(e.duration_ms) }),
        el(
          "td",
          {},
          el("button", {
            className: "link",
            textContent: "resend",
            onclick: guard(async () => {
              const r = await api("POST", `/scimClients/${client.client_id}/webhookEvents/${e.event_id}:resend`);
              status(r.success ? "re-sent" : `re-send failed: ${r.status_code ?? r.error}`, r.success);
              await loadEvents();
            }),
          }),
        ),
      ),
    ),
  );
}

$("login").addEventListener(
  "submit",
  guard(async (ev) => {
    ev.preventDefault();
    sessionStorage.setItem("roster-admin-token", $("token").value.trim());
    $("token").value = "";
    await loadOrgs();
    $("logout").hidden = false;
    status("signed in");
  }),
);
$("logout").addEventListener("click", () => {
  sessionStorage.removeItem("roster-admin-token");
  location.reload();
});
$("new-org").addEventListener(
  "submit",
  guard(async (ev) => {
    ev.preventDefault();
    await api("POST", "/organizations", { name: ev.target.name.value });
    ev.target.reset();
    await loadOrgs();
  }),
);
$("new-client").addEventListener(
  "submit",
  guard(async (ev) => {
    ev.preventDefault();
    const c = await api("POST", "/scimClients", {
      organization_id: org.id,
      name: ev.target.name.value,
      auto_link: ev.target.auto_link.checked,
    });
    ev.target.reset();
    await openOrg(org);
    const box = $("secret-once");
    box.hidden = false;
    box.textContent = `Secret of ${c.client_id} (shown once, copy it now): ${c.secret}`;
  }),
);
$("webhook").addEventListener(
  "submit",
  guard(async (ev) => {
    ev.preventDefault();
    const f = ev.target;
    const mask = [
      "webhook.url",
      "tenant",
      "product",
      "log_webhook_events",
      ...(f.secret.value ? ["webhook.secret"] : []),
    ];
    const updated = await api("PATCH", `/scimClients/${client.client_id}?update_mask=${mask.join(",")}`, {
      webhook: { url: f.url.value, secret: f.secret.value },
      tenant: f.tenant.value,
      product: f.product.value,
      log_webhook_events: f.log.checked,
    });
    status("saved");
    await openClient(updated);
  }),
);
for (const id of ["event-kind", "event-success"]) $(id).addEventListener("change", guard(loadEvents));
$("event-kind").append(...EVENTS.map((k) => el("option", { value: k, textContent: k })));
if (token() !== "")
  guard(async () => {
    await loadOrgs();
    $("logout").hidden = false;
  })();
