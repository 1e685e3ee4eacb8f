import type { IndexedAttribute } from "../scim-clients/extensions.js";
import type { UserDocument } from "./types.js";

/** One row of the extension index (0010-scim-extensions): the value as filters and uniqueness compare it. */
export interface ExtensionValue {
  readonly attribute: string;
  readonly value: string;
  readonly unique: boolean;
}

const NONE: readonly ExtensionValue[] = [];

/**
 * The indexed extension values of a document, in the order of `indexed`. A value compares case-insensitively
 * (lower-cased) unless its attribute is caseExact (RFC 7643 §2.2); empty strings are not values.
 */
export function extensionValuesOf(doc: UserDocument, indexed: readonly IndexedAttribute[]): readonly ExtensionValue[] {
  if (indexed.length === 0) return NONE;
  const out: ExtensionValue[] = [];
  for (const a of indexed) {
    const object = doc[a.schema];
    if (typeof object !== "object" || object === null || Array.isArray(object)) continue;
    const raw = (object as Record<string, unknown>)[a.name];
    if (typeof raw !== "string" || raw === "") continue;
    out.push({ attribute: a.key, value: a.caseExact ? raw : raw.toLowerCase(), unique: a.unique });
  }
  return out;
}

export const sameExtensionValues = (a: readonly ExtensionValue[], b: readonly ExtensionValue[]): boolean =>
  a.length === b.length &&
  a.every((x, i) => x.attribute === b[i]?.attribute && x.value === b[i]?.value && x.unique === b[i]?.unique);
