import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ReadView } from "../../directory/identities/types.js";
import { isUuid } from "../../platform/ids.js";
import type { ScimDeps } from "../deps.js";
import { ScimError } from "../errors.js";
import { expectedOf, notModified, withEtag } from "../etag.js";
import { applyPatch } from "../patch/apply.js";
import type { JsonObject } from "../patch/types.js";
import { refuseOtherMethods } from "../plugin.js";
import { parseProjection } from "../query/list-query.js";
import { includes, type Projection } from "../query/projection.js";
import { registryOf } from "../schema/client-registry.js";
import { CORE_REGISTRY } from "../schema/registry.js";
import { searchQueryOf } from "../search/body.js";
import { usersPage } from "../search/users.js";
import { checkImmutable } from "./extension-rules.js";
import { hasForeign, splitForeign, withForeign } from "./foreign-extensions.js";
import { renderUserText } from "./render-text.js";
import { userLocation } from "./serialize.js";
import { validateUser } from "./validate.js";

type Query = Record<string, unknown>;

const notFound = (id: string) => new ScimError(404, undefined, `user ${id} not found`);

const viewOf = (projection: Projection): ReadView => ({ groups: includes("User", projection, "groups") });

/**
 * /Users and /Users/{id}; every response that returns a user honours the projection (RFC 7644 §3.9) and is
 * rendered by userRenderer. Domain errors become SCIM errors in the scope's error handler (scimErrorOf).
 */
export function registerUserRoutes(scope: FastifyInstance, deps: ScimDeps): void {
  const { commands, queries } = deps.identities;
  const baseOf = (req: FastifyRequest) => `${deps.publicUrl()}/scim/${encodeURIComponent(req.scimClient.clientId)}/v2`;
  const idOf = (req: FastifyRequest): string => {
    const { id } = req.params as { id: string };
    if (!isUuid(id)) throw notFound(id);
    return id.toLowerCase();
  };

  scope.post("/Users", async (req, reply) => {
    const projection = parseProjection(req.query as Query);
    const client = req.scimClient;
    const registry = registryOf(client);
    const write = validateUser(req.body, registry);
    const { user } = await commands.create(client.organizationId, client, write, viewOf(projection));
    // An auto-linked create (docs/decisions.md) answers 201 with the existing id as well.
    const base = baseOf(req);
    withEtag(reply.code(201).header("location", userLocation(base, user.id)), user.version);
    return reply.send(renderUserText(user, base, projection, registry));
  });

  scope.get("/Users/:id", async (req, reply) => {
    const projection = parseProjection(req.query as Query);
    const id = idOf(req);
    const user = await queries.get(req.scimClient.organizationId, id, viewOf(projection));
    if (user === undefined) throw notFound(id);
    // RFC 7644 §3.14: the client's copy is current; the answer carries no body.
    if (notModified(req, user.version)) return withEtag(reply.code(304), user.version).send();
    return withEtag(reply, user.version).send(
      renderUserText(user, baseOf(req), projection, registryOf(req.scimClient)),
    );
  });

  scope.put("/Users/:id", async (req, reply) => {
    const projection = parseProjection(req.query as Query);
    const id = idOf(req);
    const client = req.scimClient;
    const registry = registryOf(client);
    const write = validateUser(req.body, registry);
    // RFC 7644 §3.5.1: PUT replaces what this client sees; another client's extensions stay.
    const change = (current: Record<string, unknown>) => {
      if (registry === CORE_REGISTRY && !hasForeign(current)) return write;
      checkImmutable(registry, current as JsonObject, write.scim as JsonObject);
      return withForeign(write, splitForeign(current, registry).foreign);
    };
    const user = await commands.update(client.organizationId, client, id, change, viewOf(projection), expectedOf(req));
    if (user === undefined) throw notFound(id);
    return withEtag(reply, user.version).send(renderUserText(user, baseOf(req), projection, registry));
  });

  scope.patch("/Users/:id", async (req, reply) => {
    const projection = parseProjection(req.query as Query);
    const id = idOf(req);
    const client = req.scimClient;
    const registry = registryOf(client);
    // RFC 7644 §3.5.2: atomic; the patched document is then validated like a PUT body.
    const change = (current: Record<string, unknown>) => {
      if (registry === CORE_REGISTRY && !hasForeign(current)) {
        return validateUser(applyPatch("User", current as Parameters<typeof applyPatch>[1], req.body).resource);
      }
      const { own, foreign } = splitForeign(current, registry);
      const patched = applyPatch("User", own as Parameters<typeof applyPatch>[1], req.body, registry).resource;
      const write = validateUser(patched, registry);
      checkImmutable(registry, own as JsonObject, write.scim as JsonObject);
      return withForeign(write, foreign);
    };
    const user = await commands.update(client.organizationId, client, id, change, viewOf(projection), expectedOf(req));
    if (user === undefined) throw notFound(id);
    return withEtag(reply, user.version).send(renderUserText(user, baseOf(req), projection, registry));
  });

  scope.delete("/Users/:id", async (req, reply) => {
    const id = idOf(req);
    const client = req.scimClient;
    if (!(await commands.delete(client.organizationId, client, id, expectedOf(req)))) throw notFound(id);
    return reply.code(204).send();
  });

  scope.get("/Users", async (req, reply) =>
    reply.send(await usersPage(deps, req.scimClient, baseOf(req), req.query as Query)),
  );
  // RFC 7644 §3.4.3: the same query in a SearchRequest body.
  scope.post("/Users/.search", async (req, reply) =>
    reply.send(await usersPage(deps, req.scimClient, baseOf(req), searchQueryOf(req.body))),
  );

  refuseOtherMethods(scope, "/Users", ["GET", "POST"]);
  refuseOtherMethods(scope, "/Users/.search", ["POST"]);
  refuseOtherMethods(scope, "/Users/:id", ["GET", "PUT", "PATCH", "DELETE"]);
}
