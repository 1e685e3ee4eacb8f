import type { Membership, StoredUser } from "../../directory/identities/types.js";
import type { Projection } from "../query/projection.js";
import type { SchemaRegistry } from "../schema/registry.js";
import { isPlainSchemas } from "./extension-render.js";
import { renderUser, userLocation } from "./serialize.js";

/** No projection: the response is every attribute. */
export const isWhole = (p: Projection): boolean =>
  (p.attributes === undefined || p.attributes.length === 0) &&
  (p.excludedAttributes === undefined || p.excludedAttributes.length === 0);

/**
 * How every users route answers: a StoredUser as the JSON text of renderUser. Without a projection, a user whose
 * stored document this client sees whole is spliced from the document's JSON text, which is then never parsed:
 * `schemas` and `id` first, then the document's members (jsonb's key order), `groups` and `meta` (its `version` is
 * etagOf's text, JSON-escaped: a row version is digits only). No key repeats: the document holds none of id, groups,
 * meta (document.serverKeys says otherwise), and without a projection renderUser keeps every member the document has
 * (validateUser stores registry attributes only). Any other user is rendered as an object. Parsing every document
 * of a list page costs more than the rest of its rendering (docs/decisions.md).
 */
export function userRenderer(
  baseUrl: string,
  projection: Projection,
  registry: SchemaRegistry,
): (user: StoredUser) => string {
  if (!isWhole(projection)) return (user) => JSON.stringify(renderUser(user, baseUrl, projection, registry));
  // The location's JSON prefix is escaped once per page, not per user.
  const location = locationPrefix(baseUrl);
  return (user) => spliced(user, location, registry) ?? JSON.stringify(renderUser(user, baseUrl, projection, registry));
}

/** One user: what `userRenderer(baseUrl, projection, registry)(user)` answers, without making a renderer. */
export function renderUserText(
  user: StoredUser,
  baseUrl: string,
  projection: Projection,
  registry: SchemaRegistry,
): string {
  const text = isWhole(projection) ? spliced(user, locationPrefix(baseUrl), registry) : undefined;
  return text ?? JSON.stringify(renderUser(user, baseUrl, projection, registry));
}

/** The JSON text of the user's location up to its id: `"https://…/Users/`. */
const locationPrefix = (baseUrl: string): string => JSON.stringify(userLocation(baseUrl, "")).slice(0, -1);

/** The whole user spliced from its document's text, or undefined when it must be rendered as an object. */
function spliced(user: StoredUser, location: string, registry: SchemaRegistry): string | undefined {
  const text = user.document.text;
  const split = user.managerDisplayName === null && !user.document.serverKeys ? splitSchemas(text) : undefined;
  if (split === undefined || !isPlainSchemas(registry, split.schemas)) return undefined;
  const body = split.body.length > 2 ? `,${split.body.slice(1, -1)}` : "";
  const groups = user.groups === undefined || user.groups.length === 0 ? "" : `,"groups":${scimGroups(user.groups)}`;
  // An id is a UUID: nothing in it to escape.
  return (
    `{"schemas":${split.schemas},"id":"${user.id}"${body}${groups},"meta":{"resourceType":"User",` +
    `"created":"${user.createdAt}","lastModified":"${user.updatedAt}",` +
    `"location":${location}${user.id}",` +
    `"version":"W/\\"${user.version}\\""}}`
  );
}

/**
 * jsonb's text of a stored document: `{"key": value, ...}`. Inside a JSON string every `"` is escaped, so this
 * pattern (an unescaped quote, the name, `": [`) can only match a key; a stored document holds registry attributes
 * only (validateUser), none with a sub-attribute named `schemas`.
 */
const SCHEMAS = '"schemas": [';
const SCHEMA_LIST = /^\["[^"\\\]]*"(, "[^"\\\]]*")*\]$/;

/** The document's `schemas` array and the document without it, or undefined when it is not the plain shape. */
export function splitSchemas(text: string): { schemas: string; body: string } | undefined {
  const at = text.indexOf(SCHEMAS);
  const end = at < 0 ? -1 : text.indexOf("]", at);
  if (end < 0) return undefined;
  const schemas = text.slice(at + SCHEMAS.length - 1, end + 1);
  if (!SCHEMA_LIST.test(schemas)) return undefined;
  let before = text.slice(0, at);
  let after = text.slice(end + 1);
  if (after.startsWith(", ")) after = after.slice(2);
  else if (before.endsWith(", ")) before = before.slice(0, -2);
  return { schemas, body: before + after };
}

/** The memberships as the SCIM `groups` array (RFC 7643 §4.1.2): direct ones only. */
export const scimGroups = (groups: readonly Membership[]): string =>
  `[${groups.map((g) => `{"value":"${g.groupId}","display":${JSON.stringify(g.displayName)},"type":"direct"}`).join(",")}]`;
