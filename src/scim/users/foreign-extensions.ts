import type { UserDocument, UserWrite } from "../../directory/identities/types.js";
import { CORE_REGISTRY, ENTERPRISE_USER_SCHEMA, type SchemaRegistry } from "../schema/registry.js";

type Json = Record<string, unknown>;

const isUrn = (key: string): boolean => key.length > 4 && key.slice(0, 4).toLowerCase() === "urn:";

/** Whether a stored document holds anything beyond the standard schemas (cheap: a key scan). */
export const hasForeign = (doc: UserDocument): boolean => {
  for (const key in doc) {
    // Most keys are core attribute names; the stored enterprise key has the registry's spelling.
    const c = key.charCodeAt(0);
    if ((c !== 117 && c !== 85) || key === ENTERPRISE_USER_SCHEMA) continue; // "u", "U"
    if (isUrn(key) && CORE_REGISTRY.findSchema(key) === undefined) return true;
  }
  return false;
};

/**
 * A stored user document split into what this client's registry governs and the extension objects it does not
 * know (another client of the organization declared them). A client that stores unknown extensions owns them all.
 */
export function splitForeign(doc: UserDocument, registry: SchemaRegistry): { own: Json; foreign: Json } {
  const own: Json = {};
  const foreign: Json = {};
  for (const [key, value] of Object.entries(doc)) {
    if (isUrn(key) && !registry.storeUnknown && registry.findSchema(key) === undefined) foreign[key] = value;
    else own[key] = value;
  }
  if (Object.keys(foreign).length > 0 && Array.isArray(own.schemas)) {
    own.schemas = own.schemas.filter((s) => typeof s !== "string" || !Object.hasOwn(foreign, s));
  }
  return { own, foreign };
}

/** A write with the foreign extension objects put back, their URNs in `schemas` (RFC 7643 §3). */
export function withForeign(write: UserWrite, foreign: Json): UserWrite {
  const urns = Object.keys(foreign);
  if (urns.length === 0) return write;
  const schemas = Array.isArray(write.scim.schemas) ? write.scim.schemas : [];
  return { ...write, scim: { ...write.scim, ...foreign, schemas: [...schemas, ...urns] } };
}
