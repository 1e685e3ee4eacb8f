import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Group } from "../../directory/groups/types.js";
import { isUuid } from "../../platform/ids.js";
import { ScimError } from "../errors.js";
import { expectedOf, notModified, withEtag } from "../etag.js";
import type { ScimDeps } from "../deps.js";
import { applyPatch } from "../patch/apply.js";
import { refuseOtherMethods } from "../plugin.js";
import { registryOf } from "../schema/client-registry.js";
import { CORE_REGISTRY } from "../schema/registry.js";
import { searchQueryOf } from "../search/body.js";
import { groupsPage } from "../search/groups.js";
import { extensionsToStore, groupExtensionsOf, splitExtensions } from "./extensions.js";
import { groupLocation, patchableGroup } from "./serialize.js";
import { asksForProjection, sendGroup as sendOneGroup } from "./send.js";
import { groupPatchOf, parseGroupBody } from "./validate.js";

const notFound = (id: string): ScimError => new ScimError(404, undefined, `Group ${id} not found`);

/** /Groups and /Groups/{id}; every resource response honours attributes/excludedAttributes. */
export function registerGroupRoutes(scope: FastifyInstance, deps: ScimDeps): void {
  const { groups } = deps;
  const baseUrlOf = (req: FastifyRequest) =>
    `${deps.publicUrl()}/scim/${encodeURIComponent(req.scimClient.clientId)}/v2`;
  const orgOf = (req: FastifyRequest) => req.scimClient.organizationId;

  const sendGroup = (req: FastifyRequest, reply: FastifyReply, group: Group, status = 200, known?: string) =>
    sendOneGroup(groups, req, reply, baseUrlOf(req), group, status, known);

  const idOf = (req: FastifyRequest): string => {
    const { id } = req.params as { id: string };
    if (!isUuid(id)) throw notFound(id);
    return id.toLowerCase();
  };

  scope.get("/Groups", async (req, reply) =>
    reply.send(await groupsPage(deps, req.scimClient, baseUrlOf(req), req.query as Record<string, unknown>)),
  );
  // RFC 7644 §3.4.3: the same query in a SearchRequest body.
  scope.post("/Groups/.search", async (req, reply) =>
    reply.send(await groupsPage(deps, req.scimClient, baseUrlOf(req), searchQueryOf(req.body))),
  );

  scope.post("/Groups", async (req, reply) => {
    const input = parseGroupBody(req.body, registryOf(req.scimClient));
    const group = await groups.create(orgOf(req), req.scimClient, input);
    reply.header("location", groupLocation(baseUrlOf(req), group.id));
    // A group created without members has none to read back.
    return sendGroup(req, reply, group, 201, input.members.length === 0 ? "[]" : undefined);
  });

  scope.get("/Groups/:id", async (req, reply) => {
    const id = idOf(req);
    const group = await groups.get(orgOf(req), id);
    if (group === undefined) throw notFound(id);
    // RFC 7644 §3.14: the client's copy is current; the answer carries no body (and no member is read).
    if (notModified(req, group.version)) return withEtag(reply.code(304), group.version).send();
    return sendGroup(req, reply, group);
  });

  scope.put("/Groups/:id", async (req, reply) => {
    const id = idOf(req);
    const registry = registryOf(req.scimClient);
    const input = parseGroupBody(req.body, registry);
    // RFC 7644 §3.5.1: PUT replaces what this client sees; another client's extensions stay.
    const replaced = (current: Group) =>
      registry === CORE_REGISTRY
        ? { ...input, extensions: current.extensions }
        : { ...input, extensions: extensionsToStore(input.extensions ?? null, current, registry) };
    const group = await groups.replace(orgOf(req), req.scimClient, id, replaced, expectedOf(req));
    if (group === undefined) throw notFound(id);
    return sendGroup(req, reply, group);
  });

  scope.patch("/Groups/:id", async (req, reply) => {
    const id = idOf(req);
    const registry = registryOf(req.scimClient);
    const group = await groups.patch(
      orgOf(req),
      req.scimClient,
      id,
      (current) => {
        if (registry === CORE_REGISTRY) {
          const result = applyPatch("Group", patchableGroup(current), req.body);
          return groupPatchOf(result.resource, result.members);
        }
        const { own } = splitExtensions(current, registry);
        const result = applyPatch("Group", patchableGroup(current, own), req.body, registry);
        const extensions = groupExtensionsOf(result.resource, registry);
        return groupPatchOf(result.resource, result.members, extensionsToStore(extensions, current, registry));
      },
      expectedOf(req),
    );
    if (group === undefined) throw notFound(id);
    // RFC 7644 §3.5.2: 204 unless the client asked for attributes (or its connection asks for the whole group), so
    // a membership change costs the same whatever the group's size (docs/scim-groups.md "What a PATCH answers").
    if (!asksForProjection(req.query) && req.scimClient.groupPatchResponse === "no_content") {
      return withEtag(reply.code(204), group.version).send();
    }
    return sendGroup(req, reply, group);
  });

  scope.delete("/Groups/:id", async (req, reply) => {
    const id = idOf(req);
    const deleted = await groups.delete(orgOf(req), req.scimClient, id, expectedOf(req));
    if (!deleted) throw notFound(id);
    return reply.code(204).send();
  });

  refuseOtherMethods(scope, "/Groups", ["GET", "POST"]);
  refuseOtherMethods(scope, "/Groups/.search", ["POST"]);
  refuseOtherMethods(scope, "/Groups/:id", ["GET", "PUT", "PATCH", "DELETE"]);
}
