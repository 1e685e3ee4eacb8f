import type { ScimClient } from "../scim-clients/types.js";
import { ENTERPRISE_KEY } from "./document.js";
import type { UserDocument } from "./types.js";

/**
 * The stored user as one client sees it: without the extension objects only another client of the organization
 * declared (docs/scim-extensions.md). A client that keeps undeclared extensions sees every one.
 */
export function visibleTo(client: ScimClient, doc: UserDocument): UserDocument {
  if (client.unknownExtensions === "store") return doc;
  let foreign: string[] | undefined;
  for (const key in doc) {
    // Most keys are core attribute names ("u"/"U" starts a URN); the enterprise key has its registry spelling.
    const c = key.charCodeAt(0);
    if ((c !== 117 && c !== 85) || key === ENTERPRISE_KEY || !key.toLowerCase().startsWith("urn:")) continue;
    if (client.extensions.some((e) => e.schema === key)) continue;
    foreign ??= [];
    foreign.push(key);
  }
  if (foreign === undefined) return doc;
  const hidden = new Set(foreign);
  const out: UserDocument = {};
  for (const [key, value] of Object.entries(doc)) if (!hidden.has(key)) out[key] = value;
  if (Array.isArray(doc.schemas)) out.schemas = doc.schemas.filter((s) => typeof s !== "string" || !hidden.has(s));
  return out;
}
