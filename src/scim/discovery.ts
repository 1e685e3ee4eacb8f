import type { FastifyInstance } from "fastify";
import type { AuthMethod, ScimClient } from "../directory/scim-clients/types.js";
import { ScimError } from "./errors.js";
import { CURSOR_TTL_SECONDS, DEFAULT_COUNT, FILTER_MAX_RESULTS, MAX_COUNT } from "./limits.js";
import { refuseOtherMethods } from "./plugin.js";
import { LIST_RESPONSE_SCHEMA } from "./render.js";
import { registryOf } from "./schema/client-registry.js";
import { RESOURCE_TYPE_SCHEMA, SCHEMA_SCHEMA, SERVICE_PROVIDER_CONFIG_SCHEMA } from "./schema/registry.js";
import type { AttributeDefinition, ResourceTypeDefinition, SchemaDefinition } from "./schema/types.js";

export const DOCUMENTATION_URI = "https://github.com/roster-scim/roster#readme";

/** The ServiceProviderConfig Roster advertises to one client, value for value. */
export function serviceProviderConfig(baseUrl: string, client: Pick<ScimClient, "authMethods" | "spcPagination">) {
  return {
    schemas: [SERVICE_PROVIDER_CONFIG_SCHEMA],
    documentationUri: DOCUMENTATION_URI,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: FILTER_MAX_RESULTS },
    changePassword: { supported: true },
    sort: { supported: true },
    etag: { supported: true },
    // RFC 9865 §4; some client libraries refuse keys RFC 7643 does not name, so a connection may leave it out.
    ...(client.spcPagination
      ? {
          pagination: {
            cursor: true,
            index: true,
            defaultPaginationMethod: "index",
            defaultPageSize: DEFAULT_COUNT,
            maxPageSize: MAX_COUNT,
            cursorTimeout: CURSOR_TTL_SECONDS,
          },
        }
      : {}),
    authenticationSchemes: authenticationSchemes(baseUrl, client.authMethods),
    meta: { resourceType: "ServiceProviderConfig", location: `${baseUrl}/ServiceProviderConfig` },
  };
}

/** RFC 7643 §5: one scheme per way the client may authenticate; bearer values come first (primary). */
function authenticationSchemes(baseUrl: string, methods: readonly AuthMethod[]) {
  const schemes: object[] = [];
  const bearer = methods.includes("bearer");
  const oauth = methods.includes("client_credentials");
  if (bearer || oauth) {
    const ways = [
      ...(bearer ? ["the connection's shared secret, with or without a Bearer prefix"] : []),
      ...(oauth ? [`an access token from ${baseUrl}/oauth/token (OAuth 2.0 client credentials)`] : []),
    ];
    schemes.push({
      type: "oauthbearertoken",
      name: oauth && !bearer ? "OAuth 2.0 client credentials" : "Shared secret bearer token",
      description: `The Authorization header carries ${ways.join(", or ")}`,
      specUri: "https://www.rfc-editor.org/rfc/rfc6750",
      documentationUri: DOCUMENTATION_URI,
      primary: true,
    });
  }
  if (methods.includes("basic")) {
    schemes.push({
      type: "httpbasic",
      name: "HTTP Basic",
      description: "HTTP Basic with the connection's client id as user name and its shared secret as password",
      specUri: "https://www.rfc-editor.org/rfc/rfc7617",
      documentationUri: DOCUMENTATION_URI,
      primary: schemes.length === 0,
    });
  }
  return schemes;
}

const resourceTypeJson = (rt: ResourceTypeDefinition, baseUrl: string) => ({
  schemas: [RESOURCE_TYPE_SCHEMA],
  id: rt.id,
  name: rt.name,
  endpoint: rt.endpoint,
  description: rt.description,
  schema: rt.schema,
  schemaExtensions: rt.schemaExtensions.map((e) => ({ schema: e.schema, required: e.required })),
  meta: { resourceType: "ResourceType", location: `${baseUrl}/ResourceTypes/${rt.id}` },
});

/**
 * RFC 7643 §7 knows no length, filterable or resource-id characteristic: the limit is in the description, the keys
 * stay out.
 */
const attributeJson = ({
  maxLength: _limit,
  filterable: _f,
  resourceId: _id,
  subAttributes,
  ...rest
}: AttributeDefinition): object => ({
  ...rest,
  ...(subAttributes === undefined ? {} : { subAttributes: subAttributes.map(attributeJson) }),
});

const schemaJson = (s: SchemaDefinition, baseUrl: string) => ({
  schemas: [SCHEMA_SCHEMA],
  id: s.id,
  name: s.name,
  description: s.description,
  attributes: s.attributes.map(attributeJson),
  meta: { resourceType: "Schema", location: `${baseUrl}/Schemas/${s.id}` },
});

const listOf = (resources: unknown[]) => ({
  schemas: [LIST_RESPONSE_SCHEMA],
  totalResults: resources.length,
  itemsPerPage: resources.length,
  startIndex: 1,
  Resources: resources,
});

/** Read-only discovery endpoints, all derived from the one schema registry. */
export function registerDiscoveryRoutes(scope: FastifyInstance, baseUrlOf: (clientId: string) => string): void {
  const base = (params: unknown) => baseUrlOf((params as { clientId: string }).clientId);

  scope.get("/ServiceProviderConfig", async (req) => serviceProviderConfig(base(req.params), req.scimClient));
  // Each client sees the standard schemas plus the extensions it declared (docs/scim-extensions.md).
  scope.get("/ResourceTypes", async (req) =>
    listOf(registryOf(req.scimClient).resourceTypes.map((rt) => resourceTypeJson(rt, base(req.params)))),
  );
  scope.get<{ Params: { id: string } }>("/ResourceTypes/:id", async (req) => {
    const types = registryOf(req.scimClient).resourceTypes;
    const rt = types.find((r) => r.id.toLowerCase() === req.params.id.toLowerCase());
    if (rt === undefined) throw new ScimError(404, undefined, `resource type ${req.params.id} not found`);
    return resourceTypeJson(rt, base(req.params));
  });
  scope.get("/Schemas", async (req) =>
    listOf(registryOf(req.scimClient).schemas.map((s) => schemaJson(s, base(req.params)))),
  );
  scope.get<{ Params: { id: string } }>("/Schemas/:id", async (req) => {
    const schema = registryOf(req.scimClient).findSchema(req.params.id);
    if (schema === undefined) throw new ScimError(404, undefined, `schema ${req.params.id} not found`);
    return schemaJson(schema, base(req.params));
  });

  for (const url of ["/ServiceProviderConfig", "/ResourceTypes", "/ResourceTypes/:id", "/Schemas", "/Schemas/:id"]) {
    refuseOtherMethods(scope, url, ["GET"]);
  }
}
