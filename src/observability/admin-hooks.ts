import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Clock } from "../platform/clock.js";
import { monotonicUuidv7Source } from "./ids.js";
import type { Logger } from "../platform/logger.js";
import type { AuditRepo } from "./audit/repo.js";
import type { Metrics } from "./metrics.js";
import { adminOperation } from "./operation.js";

/** Who made an admin change: the credential's id and a readable name. */
export interface AdminActor {
  readonly id: string;
  readonly name: string;
}

/** The instance's bootstrap admin token (ROSTER_ADMIN_TOKEN, or the one generated on first start). */
export const BOOTSTRAP_ACTOR: AdminActor = { id: "bootstrap", name: "bootstrap admin token" };

/** The credential admin authentication accepted (req.adminPrincipal): a named token, else the bootstrap token. */
function actorOf(req: FastifyRequest): AdminActor {
  const principal = req.adminPrincipal;
  if (principal?.kind === "setup") return { id: `setup-link:${principal.linkId}`, name: "setup link" };
  return principal?.kind === "token" ? { id: principal.tokenId, name: principal.name } : BOOTSTRAP_ACTOR;
}

export interface AdminObservabilityDeps {
  readonly metrics: Metrics;
  readonly audit: AuditRepo;
  readonly logger: Logger;
  readonly clock: Clock;
}

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/** A verb that only reads, though sent as a POST (it changes nothing to audit). */
const READ_ONLY_VERBS = new Set(["verify", "verifyPassword"]);
const MAX_FIELDS = 64;

/**
 * Every admin request: a metric and, for a write, one `info` line; every successful write: an audit row with the
 * actor, the action, the target and the names of the fields it set — never their values. The row is written before
 * the answer is sent, so that whoever sees the change succeed can find it in the audit trail.
 */
export function installAdminObservability(scope: FastifyInstance, deps: AdminObservabilityDeps): void {
  // A create's target is known from its answer only: onSend keeps it for the log line written in onResponse.
  const targets = new WeakMap<FastifyRequest, string>();
  const ids = monotonicUuidv7Source();
  scope.addHook("onSend", async (req, reply, payload) => {
    if (!WRITES.has(req.method) || reply.statusCode >= 300) return payload;
    const operation = adminOperation(req.method, req.routeOptions.url);
    const verb = operation.slice(operation.lastIndexOf(".") + 1);
    const target = targetOf(req, payload);
    targets.set(req, target);
    if (READ_ONLY_VERBS.has(verb)) return payload;
    const actor = actorOf(req);
    const now = deps.clock.now();
    try {
      await deps.audit.insert({
        id: ids(now.getTime()),
        time: now,
        actor_id: actor.id,
        actor_name: actor.name,
        action: operation,
        target,
        changed_fields: changedFields(req),
        status: reply.statusCode,
      });
    } catch (e) {
      deps.logger.error({ err: e, operation }, "could not record an admin change in the audit trail");
    }
    return payload;
  });
  scope.addHook("onResponse", (req, reply, done) => {
    const operation = adminOperation(req.method, req.routeOptions.url);
    const ms = reply.elapsedTime;
    deps.metrics.adminRequest(operation, reply.statusCode, ms / 1000);
    if (WRITES.has(req.method)) {
      deps.logger.info(
        {
          method: req.method,
          path: pathOf(req.url),
          status: reply.statusCode,
          operation,
          target: targets.get(req) ?? targetOf(req, undefined),
          actor: actorOf(req).id,
          ip: req.ip,
          ms: Math.round(ms * 100) / 100,
        },
        reply.statusCode < 400 ? "admin change" : "admin change refused",
      );
    }
    done();
  });
}

const pathOf = (url: string): string => url.split("?")[0] ?? url;

/**
 * The resource the write touched, as an admin path without the prefix: `scimClients/acme`, `issuedApiKeys/…`.
 * A create names the new resource from its answer.
 */
function targetOf(req: FastifyRequest, payload: unknown): string {
  const path = pathOf(req.url)
    .replace(/^\/v2alpha1\/admin\//i, "")
    .replace(/:[A-Za-z]+$/, "");
  if (req.method !== "POST" || typeof payload !== "string" || (req.params as Record<string, unknown>)?.id) {
    return path;
  }
  const created = createdId(payload);
  return created === undefined || path.includes("/") ? path : `${path}/${created}`;
}

function createdId(payload: string): string | undefined {
  try {
    const body = JSON.parse(payload) as Record<string, unknown>;
    for (const key of ["id", "client_id", "key_id"]) {
      const v = body[key];
      if (typeof v === "string") return v;
    }
  } catch {
    // not JSON: no id to add
  }
  return undefined;
}

/** The update mask when one is given, else the body's field paths (`webhook.url`), values never. */
function changedFields(req: FastifyRequest): string[] {
  const mask = (req.query as Record<string, unknown> | undefined)?.update_mask;
  if (typeof mask === "string" && mask.trim() !== "") {
    return mask
      .split(",")
      .map((f) => f.trim())
      .filter((f) => f !== "")
      .slice(0, MAX_FIELDS);
  }
  const fields: string[] = [];
  collect(req.body, "", fields, 0);
  return fields;
}

function collect(value: unknown, prefix: string, into: string[], depth: number): void {
  if (value === null || typeof value !== "object" || Array.isArray(value) || depth > 3) {
    if (prefix !== "") into.push(prefix);
    return;
  }
  for (const key of Object.keys(value)) {
    if (into.length >= MAX_FIELDS) return;
    collect((value as Record<string, unknown>)[key], prefix === "" ? key : `${prefix}.${key}`, into, depth + 1);
  }
}
