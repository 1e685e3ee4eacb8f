import type { Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { DataMapper } from "../../directory/mapping/mapper.js";
import type { ScimClientService } from "../../directory/scim-clients/service.js";
import type { ScimClient } from "../../directory/scim-clients/types.js";
import { ScimError } from "../../scim/errors.js";
import { registryOf } from "../../scim/schema/client-registry.js";
import { validateUser } from "../../scim/users/validate.js";
import { invalidArgument, notFound } from "../errors.js";
import { isObject } from "../json.js";
import { errors } from "../schemas/kit.js";
import { ClientParams, TestMappingBody, TraitsJson } from "../schemas/scim-clients.js";

export interface TestMappingDeps {
  readonly scimClients: ScimClientService;
  readonly mapper: DataMapper;
  readonly validateMapping: (mapping: string) => Promise<void>;
}

/**
 * `POST /scimClients/{client_id}:testMapping {user, mapping?}` → the traits the client's mapping
 * (or the given one) would produce for that SCIM user, stored nowhere.
 */
export function registerTestMappingRoute(scope: FastifyInstance, deps: TestMappingDeps): void {
  const clients = new WeakMap<object, ScimClient>();
  // A regex-bounded parameter, then the escaped colon: find-my-way reads `:clientId::testMapping` as one parameter name.
  scope.post<{ Params: Static<typeof ClientParams>; Body: Static<typeof TestMappingBody> }>(
    "/scimClients/:clientId(^[A-Za-z0-9._~-]+)::testMapping",
    {
      schema: {
        tags: ["SCIM clients"],
        params: ClientParams,
        body: TestMappingBody,
        response: { 200: TraitsJson, ...errors },
      },
      // An unknown client is 404 before what the body holds is judged (a body that is no object is 400 first).
      preValidation: async (req) => {
        if (!isObject(req.body)) return;
        const client = await deps.scimClients.get(req.params.clientId);
        if (client === undefined) throw notFound(`SCIM client ${req.params.clientId} does not exist`);
        clients.set(req, client);
      },
    },
    async (req) => {
      const body = req.body;
      const client = clients.get(req);
      if (client === undefined) throw notFound(`SCIM client ${req.params.clientId} does not exist`);
      const override = body.mapping ?? undefined;
      if (override !== undefined) await deps.validateMapping(override);
      let user: Record<string, unknown>;
      try {
        // The client's declared extensions are validated and kept, so a mapping can turn them into traits.
        user = validateUser(body.user, registryOf(client)).scim;
      } catch (e) {
        if (e instanceof ScimError) throw invalidArgument(`user is not a valid SCIM user: ${e.detail ?? ""}`);
        throw e;
      }
      const mapping = await deps.mapper.forSource(override ?? client.mapping, client.organizationId);
      return { traits: await mapping.evaluate(user) };
    },
  );
}
