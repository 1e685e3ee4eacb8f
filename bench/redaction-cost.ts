/**
 * What redacting one SCIM request log entry costs, CPU only: the background writer builds each entry (redaction,
 * serialisation, truncation) a batch at a time, off the request's path. Four kinds of entries: a GET answering a
 * user, a PATCH of a name, a create with a password, and a PATCH setting a password (the one that is redacted).
 * Run: npx tsx bench/redaction-cost.ts [entries=50000]
 */
import { performance } from "node:perf_hooks";
import { monotonicUuidv7Source } from "../src/observability/ids.js";
import { type ObservedRequest, requestLogEntry } from "../src/observability/request-log/entry.js";

const ids = monotonicUuidv7Source();
import { uuidv7 } from "../src/platform/ids.js";
import { sampleStoredUser, sampleUser, sampleUserId } from "./lib/sample-user.js";

const N = Number(process.argv[2] ?? 50_000);
// The SCIM layer's redactor when it exists (absent on a tree without it: the generic one is measured).
const scim = (await import("../src/scim/redact.js").catch(() => undefined)) as { SCIM_REDACTOR?: unknown } | undefined;
const redactor = scim?.SCIM_REDACTOR;
const client = { clientId: "bench-client", organizationId: uuidv7(), extensions: [], unknownExtensions: "reject" };
const userId = sampleUserId;
const user = sampleUser;
const stored = sampleStoredUser;
const patchOp = (path: string, value: unknown) => ({
  schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
  Operations: [{ op: "replace", path, value }],
});
const KINDS = {
  get: { method: "GET", byId: true, body: undefined },
  "patch name": { method: "PATCH", byId: true, body: patchOp("name.givenName", "Grace") },
  "create with password": { method: "POST", byId: false, body: { ...user, password: "Hunter2-secret" } },
  "patch password": { method: "PATCH", byId: true, body: patchOp("password", "Hunter2-secret") },
} as const;

function entry(kind: keyof typeof KINDS, i: number) {
  const k = KINDS[kind];
  const observed = {
    client,
    time: Date.now(),
    method: k.method,
    url: `/scim/bench-client/v2/Users${k.byId ? `/${userId}` : ""}`,
    status: 200,
    ms: 3.2,
    resourceId: userId,
    requestBody: k.body,
    responsePayload: stored,
    userAgent: `Okta SCIM Client 1.0.0 #${i}`,
    ...(redactor === undefined ? {} : { redactor }),
  } as unknown as ObservedRequest;
  return requestLogEntry(observed, ids);
}

const lines: string[] = [`redactor: ${redactor === undefined ? "generic (by key)" : "SCIM (by meaning)"}`];
for (const kind of Object.keys(KINDS) as Array<keyof typeof KINDS>) {
  for (let i = 0; i < 5_000; i++) entry(kind, i); // warm-up (JIT)
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    const cpu = process.cpuUsage();
    for (let i = 0; i < N; i++) entry(kind, i);
    const used = process.cpuUsage(cpu);
    best = Math.min(best, (used.user + used.system) / N);
  }
  lines.push(`${kind}: ${best.toFixed(2)} µs CPU per entry (best of 5 rounds of ${N})`);
}
process.stdout.write(`${lines.join("\n")}\n${performance.now() | 0} ms\n`);
