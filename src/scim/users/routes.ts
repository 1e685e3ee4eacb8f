import type { FastifyInstance, FastifyRequest } from "fastify";
import { ExtensionConflictError, IdentityConflictError } from "../../directory/identities/errors.js";
import type { ReadView, UserFilter } from "../../directory/identities/types.js";
import { MappingError } from "../../directory/mapping/errors.js";
import { isUuid } from "../../platform/ids.js";
import { ScimError } from "../errors.js";
import type { ScimDeps } from "../index.js";
import { applyPatch } from "../patch/apply.js";
import { refuseOtherMethods } from "../plugin.js";
import type { EqFilter } from "../query/filter.js";
import { listResponse, pageRequestOf } from "../query/list-page.js";
import { parseListQuery, parseProjection } from "../query/list-query.js";
import { includes, type Projection } from "../query/projection.js";
import { rawArray, stringifyWithRaw } from "../raw-json.js";
import { extensionLookup, indexedValue, registryOf } from "../schema/client-registry.js";
import { CORE_REGISTRY, type SchemaRegistry } from "../schema/registry.js";
import type { JsonObject } from "../patch/types.js";
import { isPlainSchemas } from "./extension-render.js";
import { checkImmutable } from "./extension-rules.js";
import { hasForeign, splitForeign, withForeign } from "./foreign-extensions.js";
import { isUserText, renderUser, renderUserText, userLocation, userTextRenderer } from "./serialize.js";
import { validateUser } from "./validate.js";

type Query = Record<string, unknown>;

const notFound = (id: string) => new ScimError(404, undefined, `user ${id} not found`);

/** No projection: the response is every attribute, spliced as JSON text (renderUserText). */
const isWhole = (p: Projection): boolean =>
  (p.attributes === undefined || p.attributes.length === 0) &&
  (p.excludedAttributes === undefined || p.excludedAttributes.length === 0);

/** Which stored `schemas` arrays a client may be sent verbatim (see PlainSchemas). */
const plainFor = (registry: SchemaRegistry) =>
  registry.memo("users.plainFor", () => (schemasText: string) => isPlainSchemas(registry, schemasText));

const viewOf = (projection: Projection): ReadView => ({ groups: includes("User", projection, "groups") });

/** Domain errors → SCIM errors (spec 7): conflicts are 409 uniqueness, a failed data mapping is a 500. */
async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof IdentityConflictError) throw new ScimError(409, "uniqueness", e.message);
    if (e instanceof ExtensionConflictError) throw new ScimError(409, "uniqueness", e.message);
    if (e instanceof MappingError) throw new ScimError(500, undefined, `data mapping failed: ${e.message}`);
    throw e;
  }
}

function userFilter(filter: EqFilter | undefined): UserFilter | undefined {
  if (filter === undefined) return undefined;
  if (filter.attribute === "displayName") throw new ScimError(400, "invalidFilter", "displayName is a Group filter");
  if (filter.attribute === "extension") {
    return { attribute: "extension", key: filter.key, value: indexedValue(filter) };
  }
  return { attribute: filter.attribute, value: filter.value };
}

/** Spec 4.2: /Users and /Users/{id}; every response that returns a user honours the projection (spec 4.4). */
export function registerUserRoutes(scope: FastifyInstance, deps: ScimDeps): void {
  const { identities } = deps;
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
    const { user } = await translated(() =>
      identities.create(client.organizationId, client, write, viewOf(projection)),
    );
    // Spec 4.5.7 and DESIGN: an auto-linked create answers 201 with the existing id as well.
    reply.code(201).header("location", userLocation(baseOf(req), user.id));
    return renderUser(user, baseOf(req), projection, registry);
  });

  scope.get("/Users/:id", async (req, reply) => {
    const projection = parseProjection(req.query as Query);
    const id = idOf(req);
    const registry = registryOf(req.scimClient);
    if (isWhole(projection)) {
      const user = await identities.getText(req.scimClient.organizationId, id, plainFor(registry));
      if (user === undefined) throw notFound(id);
      const base = baseOf(req);
      return reply.send(
        isUserText(user) ? renderUserText(user, base) : JSON.stringify(renderUser(user, base, projection, registry)),
      );
    }
    const user = await identities.get(req.scimClient.organizationId, id, viewOf(projection));
    if (user === undefined) throw notFound(id);
    return renderUser(user, baseOf(req), projection, registry);
  });

  scope.put("/Users/:id", async (req) => {
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
    const user = await translated(() =>
      identities.update(client.organizationId, client, id, change, viewOf(projection)),
    );
    if (user === undefined) throw notFound(id);
    return renderUser(user, baseOf(req), projection, registry);
  });

  scope.patch("/Users/:id", async (req) => {
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
    const user = await translated(() =>
      identities.update(client.organizationId, client, id, change, viewOf(projection)),
    );
    if (user === undefined) throw notFound(id);
    return renderUser(user, baseOf(req), projection, registry);
  });

  scope.delete("/Users/:id", async (req, reply) => {
    const id = idOf(req);
    const client = req.scimClient;
    if (!(await identities.delete(client.organizationId, client, id))) throw notFound(id);
    return reply.code(204).send();
  });

  scope.get("/Users", async (req, reply) => {
    const client = req.scimClient;
    const registry = registryOf(client);
    const query = parseListQuery("User", req.query as Query, extensionLookup(client.indexedAttributes));
    const { request, context } = pageRequestOf("User", client.clientId, query, deps.cursors);
    const projection: Projection = { attributes: query.attributes, excludedAttributes: query.excludedAttributes };
    if (isWhole(projection)) {
      const page = await identities.listText(
        client.organizationId,
        userFilter(query.filter),
        request,
        plainFor(registry),
      );
      const base = baseOf(req);
      const renderText = userTextRenderer(base);
      const render = (u: (typeof page.rows)[number]) =>
        isUserText(u) ? renderText(u) : JSON.stringify(renderUser(u, base, projection, registry));
      return reply.send(stringifyWithRaw(listResponse(query, page, render, deps.cursors, context, rawArray)));
    }
    const page = await identities.list(client.organizationId, userFilter(query.filter), request, viewOf(projection));
    const base = baseOf(req);
    return listResponse(query, page, (u) => renderUser(u, base, projection, registry), deps.cursors, context);
  });

  refuseOtherMethods(scope, "/Users", ["GET", "POST"]);
  refuseOtherMethods(scope, "/Users/:id", ["GET", "PUT", "PATCH", "DELETE"]);
}
