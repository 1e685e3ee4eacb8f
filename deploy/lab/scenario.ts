/**
 * The lab's failover scenario (run by deploy/lab/run.sh, which sets the environment): an IdP-like SCIM load through
 * the load balancer, a webhook receiver, a kill -9 of the primary PostgreSQL node (its Patroni and its postmaster)
 * in the middle, later a kill -9 of one Roster instance; then a report of what every phase answered, the write
 * outage, acknowledged writes lost, events lost and delivered twice, cursors across instances and the time until
 * every instance was ready again. Exits 1 when a write or an event was lost.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import pg from "pg";

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set (run deploy/lab/run.sh)`);
  return value;
};
const LAB = env("LAB");
const LB = `http://127.0.0.1:${env("ROSTER_LB")}`;
const ADMIN = { authorization: `Bearer ${env("ADMIN_TOKEN")}`, "content-type": "application/json" };
const RECEIVER_PORT = Number(env("RECEIVER"));
const ROSTER_PORTS = env("LAB_ROSTER_PORTS").split(" ").map(Number);
const NODES = [
  { name: "pg1", api: Number(env("API1")) },
  { name: "pg2", api: Number(env("API2")) },
];
const WORKERS = Number(process.env.LAB_WORKERS ?? 6);
const PHASE_SECONDS = Number(process.env.LAB_PHASE_SECONDS ?? 12);
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

const started = Date.now();
const since = (t: number): string => `${((t - started) / 1000).toFixed(1)} s`;
const say = (line: string): void => void process.stdout.write(`[scenario ${since(Date.now())}] ${line}\n`);

// --- the webhook receiver -------------------------------------------------------------------------------------
const deliveries = new Map<string, number>();
const received: { event: string; id: string; title: unknown }[] = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const id = String(req.headers["webhook-id"]);
    const seen = deliveries.get(id) ?? 0;
    deliveries.set(id, seen + 1);
    if (seen === 0) {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        event: string;
        data: { id: string; raw?: { title?: unknown } };
      };
      received.push({ event: body.event, id: body.data.id, title: body.data.raw?.title });
    }
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(RECEIVER_PORT, "127.0.0.1", resolve));

// --- bookkeeping of what the load saw -------------------------------------------------------------------------
type Phase = "steady" | "primary killed" | "after failover" | "roster killed" | "after roster loss";
let phase: Phase = "steady";
const answers = new Map<Phase, Map<string, number>>();
const count = (status: string): void => {
  const byStatus = answers.get(phase) ?? new Map<string, number>();
  byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  answers.set(phase, byStatus);
};
const writeOk: number[] = [];
const writeFailed: number[] = [];

interface TrackedUser {
  id: string;
  /** The title of the last write acknowledged with a 2xx. */
  acked: string;
  /** Titles sent after it whose outcome is unknown (a 5xx, a timeout): the database may hold any of them. */
  unknown: string[];
}
const users: TrackedUser[] = [];
const ackedCreates: string[] = [];
const ackedTitles: { id: string; title: string }[] = [];
let cursorPages = 0;
let cursorErrors = 0;

async function call(method: string, url: string, body?: unknown, write = true): Promise<Response | undefined> {
  try {
    const res = await fetch(url, {
      method,
      headers: scimHeaders,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(15_000),
    });
    count(String(res.status));
    if (write) (res.ok ? writeOk : writeFailed).push(Date.now());
    return res;
  } catch {
    count("no answer");
    if (write) writeFailed.push(Date.now());
    return undefined;
  }
}

// --- set-up through the admin API -----------------------------------------------------------------------------
async function admin<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(`${LB}/v2alpha1/admin/${path}`, {
    method: "POST",
    headers: ADMIN,
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`admin ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}
const org = await admin<{ id: string }>("organizations", { name: "Lab" });
const client = await admin<{ client_id: string; secret: string; scim_base_url: string }>("scimClients", {
  organization_id: org.id,
  webhook: { url: `http://127.0.0.1:${RECEIVER_PORT}/hook`, secret: "lab-webhook-secret-0123456789" },
});
const scimHeaders = { authorization: `Bearer ${client.secret}`, "content-type": "application/scim+json" };
const SCIM = `${LB}/scim/${client.client_id}/v2`;
say(`organization ${org.id}, SCIM client ${client.client_id}`);

// --- the load -------------------------------------------------------------------------------------------------
let stopping = false;
let serial = 0;

async function writer(w: number): Promise<void> {
  const group = await call("POST", `${SCIM}/Groups`, {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
    displayName: `lab-${w}`,
  });
  const groupId = group?.ok === true ? ((await group.json()) as { id: string }).id : undefined;
  const mine: TrackedUser[] = [];
  while (!stopping) {
    const n = serial++;
    const title = `t${n}`;
    if (mine.length < 5 || n % 4 === 0) {
      const res = await call("POST", `${SCIM}/Users`, {
        schemas: [USER],
        userName: `w${w}-${n}@lab.test`,
        name: { givenName: "Lab", familyName: `User ${n}` },
        title,
        active: true,
      });
      if (res?.status === 201) {
        const { id } = (await res.json()) as { id: string };
        const user = { id, acked: title, unknown: [] };
        mine.push(user);
        users.push(user);
        ackedCreates.push(id);
        ackedTitles.push({ id, title });
        if (groupId !== undefined && n % 3 === 0) {
          await call("PATCH", `${SCIM}/Groups/${groupId}`, {
            schemas: [PATCH_OP],
            Operations: [{ op: "add", path: "members", value: [{ value: id }] }],
          });
        }
      } else await res?.arrayBuffer();
      continue;
    }
    const user = mine[n % mine.length];
    if (user === undefined) continue;
    const res =
      n % 5 === 0
        ? await call("PUT", `${SCIM}/Users/${user.id}`, {
            schemas: [USER],
            userName: `w${w}-put-${user.id}@lab.test`,
            title,
            active: true,
          })
        : await call("PATCH", `${SCIM}/Users/${user.id}`, {
            schemas: [PATCH_OP],
            Operations: [{ op: "replace", value: { title } }],
          });
    if (res?.ok === true) {
      user.acked = title;
      user.unknown = [];
      ackedTitles.push({ id: user.id, title });
    } else if (res === undefined || res.status >= 500) user.unknown.push(title);
    await res?.arrayBuffer();
  }
}

/** Walks the user list with cursors; round robin sends consecutive pages to different instances. */
async function walker(): Promise<void> {
  while (!stopping) {
    let cursor = "";
    for (let page = 0; page < 20 && !stopping; page++) {
      const res = await call("GET", `${SCIM}/Users?count=10&cursor=${encodeURIComponent(cursor)}`, undefined, false);
      if (res === undefined || res.status >= 500) break;
      const body = (await res.json()) as { nextCursor?: string; scimType?: string };
      if (res.status === 400) {
        cursorErrors++;
        break;
      }
      cursorPages++;
      if (body.nextCursor === undefined) break;
      cursor = body.nextCursor;
    }
  }
}

// --- faults ---------------------------------------------------------------------------------------------------
async function leader(): Promise<(typeof NODES)[number] | undefined> {
  for (const node of NODES) {
    const res = await fetch(`http://127.0.0.1:${node.api}/primary`, { signal: AbortSignal.timeout(1000) }).catch(
      () => undefined,
    );
    if (res?.status === 200) return node;
  }
  return undefined;
}

function killNode(name: string): void {
  const postmaster = Number(readFileSync(`${LAB}/${name}/postmaster.pid`, "utf8").split("\n")[0]);
  const patroni = spawn("pkill", ["-9", "-f", `patroni ${LAB}/patroni-${name}.yml`], { stdio: "ignore" });
  patroni.on("error", () => {});
  process.kill(postmaster, "SIGKILL");
}

async function readyEverywhere(): Promise<boolean> {
  const answersReady = await Promise.all(
    ROSTER_PORTS.map((p) =>
      fetch(`http://127.0.0.1:${p}/health/ready`, { signal: AbortSignal.timeout(1000) })
        .then((r) => r.status === 200)
        .catch(() => false),
    ),
  );
  return answersReady.every(Boolean);
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const load = [...Array.from({ length: WORKERS }, (_, w) => writer(w)), walker()];
await pause(PHASE_SECONDS * 1000);

const primary = await leader();
if (primary === undefined) throw new Error("no primary before the failover");
const standby = NODES.find((n) => n !== primary);
say(`kill -9 of the primary ${primary.name} (its Patroni and its postmaster)`);
phase = "primary killed";
const killedAt = Date.now();
killNode(primary.name);
let promotedAt: number | undefined;
while (Date.now() - killedAt < 90_000) {
  if ((await leader())?.name === standby?.name) {
    promotedAt = Date.now();
    break;
  }
  await pause(200);
}
say(
  promotedAt === undefined
    ? "no promotion within 90 s"
    : `${standby?.name} promoted after ${((promotedAt - killedAt) / 1000).toFixed(1)} s`,
);
// The first successful write after the kill ends the write outage.
while (Date.now() - killedAt < 90_000 && !writeOk.some((t) => t > (promotedAt ?? killedAt))) await pause(100);
let readyAgainAt: number | undefined;
while (Date.now() - killedAt < 90_000) {
  if (await readyEverywhere()) {
    readyAgainAt = Date.now();
    break;
  }
  await pause(200);
}
// The old primary rejoins as a standby (pg_rewind), restoring the synchronous pair.
const rejoin = spawn("runuser", ["-u", "postgres", "--", "patroni", `${LAB}/patroni-${primary.name}.yml`], {
  stdio: "ignore",
  detached: true,
});
rejoin.on("error", () => {});
rejoin.unref();
phase = "after failover";
await pause(PHASE_SECONDS * 1000);

const victim = 2;
const victimPid = Number(readFileSync(`${LAB}/roster-${victim}.pid`, "utf8"));
say(`kill -9 of Roster instance ${victim} (pid ${victimPid})`);
phase = "roster killed";
try {
  process.kill(victimPid, "SIGKILL");
} catch {
  say(`Roster instance ${victim} was already gone: it did not survive the failover`);
}
await pause(PHASE_SECONDS * 1000);
phase = "after roster loss";
await pause(PHASE_SECONDS * 1000);
stopping = true;
await Promise.all(load);
say("load stopped; waiting for webhook deliveries to drain");

// --- the verdict ----------------------------------------------------------------------------------------------
const db = new pg.Client({ host: "127.0.0.1", port: Number(env("PG_FRONT")), user: "postgres", database: "roster" });
await db.connect();
const outboxLeft = async (): Promise<number> =>
  Number((await db.query("select count(*)::int as n from webhook_outbox")).rows[0]?.n ?? 0);
const drainStart = Date.now();
while (Date.now() - drainStart < 60_000 && (await outboxLeft()) > 0) await pause(250);
const undelivered = await outboxLeft();

const rows = await db.query<{ id: string; title: string | null }>(
  "select id, scim->>'title' as title from identities where organization_id = $1",
  [org.id],
);
const stored = new Map(rows.rows.map((r) => [r.id, r.title]));
let lostWrites = 0;
for (const id of ackedCreates) if (!stored.has(id)) lostWrites++;
for (const user of users) {
  const title = stored.get(user.id);
  if (title !== undefined && title !== user.acked && !user.unknown.includes(title ?? "")) lostWrites++;
}
const delivered = new Set(received.map((r) => `${r.event} ${r.id} ${String(r.title)}`));
const createdSeen = new Set(received.filter((r) => r.event === "user.created").map((r) => r.id));
let lostEvents = 0;
for (const id of ackedCreates) if (!createdSeen.has(id)) lostEvents++;
for (const { id, title } of ackedTitles) {
  if (!delivered.has(`user.created ${id} ${title}`) && !delivered.has(`user.updated ${id} ${title}`)) lostEvents++;
}
const duplicates = [...deliveries.values()].filter((n) => n > 1).length;
await db.end();
receiver.close();

const outage =
  writeFailed.filter((t) => t >= killedAt).length === 0
    ? 0
    : ((writeOk.find((t) => t > (writeFailed.find((f) => f >= killedAt) ?? killedAt)) ?? Date.now()) -
        (writeFailed.find((f) => f >= killedAt) ?? killedAt)) /
      1000;

const lines: string[] = [];
lines.push("", "## Lab report", "");
lines.push(
  `Load: ${WORKERS} writers (create, PATCH, PUT, group membership) and 1 cursor walker, ${PHASE_SECONDS} s a phase.`,
);
lines.push("", "| phase | answers |", "|---|---|");
for (const [p, byStatus] of answers) {
  const parts = [...byStatus.entries()].sort().map(([s, n]) => `${s}: ${n}`);
  lines.push(`| ${p} | ${parts.join(", ")} |`);
}
lines.push("");
lines.push(
  `- promotion of the standby: ${promotedAt === undefined ? "none" : `${((promotedAt - killedAt) / 1000).toFixed(1)} s after the kill`}`,
);
lines.push(`- write outage (first failed write after the kill → next successful write): ${outage.toFixed(1)} s`);
lines.push(
  `- /health/ready 200 on every instance again: ${readyAgainAt === undefined ? "never" : `${((readyAgainAt - killedAt) / 1000).toFixed(1)} s after the kill`}`,
);
lines.push(`- acknowledged writes: ${ackedTitles.length} (${ackedCreates.length} creates); lost: ${lostWrites}`);
lines.push(
  `- events expected from acknowledged writes: ${ackedCreates.length + ackedTitles.length}; lost: ${lostEvents}; still undelivered in the outbox: ${undelivered}`,
);
lines.push(`- webhook deliveries: ${received.length} distinct events; delivered more than once: ${duplicates}`);
const alive = (i: number): boolean => {
  try {
    process.kill(Number(readFileSync(`${LAB}/roster-${i}.pid`, "utf8")), 0);
    return true;
  } catch {
    return false;
  }
};
const crashed = ROSTER_PORTS.map((_, i) => i + 1).filter((i) => i !== victim && !alive(i));
lines.push(`- Roster instances that ended without being killed: ${crashed.length === 0 ? "none" : crashed.join(", ")}`);
lines.push(`- cursor pages across instances: ${cursorPages}; refused cursors: ${cursorErrors}`);
process.stdout.write(`${lines.join("\n")}\n`);
process.exit(lostWrites === 0 && lostEvents === 0 && undelivered === 0 && crashed.length === 0 ? 0 : 1);
