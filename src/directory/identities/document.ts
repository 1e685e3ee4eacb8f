import { isUuid } from "../../platform/ids.js";
import type { UserDocument } from "./types.js";

/**
 * The Enterprise User extension key in a stored document (RFC 7643 §4.3): the directory reads employeeNumber and the
 * manager from there, so it names the URN; the SCIM registry's Enterprise User schema takes its id from here.
 */
export const ENTERPRISE_KEY = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

export type IdentifierKind = "userName" | "email";

export interface Identifier {
  readonly value: string;
  readonly kind: IdentifierKind;
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const obj = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

export const identifierKey = (value: string): string => value.toLowerCase();

/**
 * userName and every email value are unique across the service, case-insensitively. One value is
 * listed once; userName wins when an email repeats it.
 */
export function identifiersOf(doc: UserDocument): Identifier[] {
  const out = new Map<string, Identifier>();
  const userName = str(doc.userName);
  if (userName !== undefined) out.set(identifierKey(userName), { value: identifierKey(userName), kind: "userName" });
  for (const email of Array.isArray(doc.emails) ? doc.emails : []) {
    const value = str(obj(email)?.value);
    if (value !== undefined && !out.has(identifierKey(value))) {
      out.set(identifierKey(value), { value: identifierKey(value), kind: "email" });
    }
  }
  return [...out.values()];
}

/** The email value marked primary, if any. */
export function primaryEmail(doc: UserDocument): string | undefined {
  const emails = (Array.isArray(doc.emails) ? doc.emails : []).map(obj).filter((e) => e !== undefined);
  return str(emails.find((e) => e.primary === true)?.value);
}

/** The columns derived from a document, indexed or searched beside it. */
export function columnsOf(doc: UserDocument) {
  const enterprise = obj(doc[ENTERPRISE_KEY]);
  return {
    user_name: str(doc.userName) ?? "",
    external_id: str(doc.externalId) ?? null,
    employee_number: str(enterprise?.employeeNumber) ?? null,
    active: doc.active !== false,
    manager_id: managerIdOf(enterprise),
  };
}

/** The enterprise manager's value when it is a UUID: only such a value can name a user of the directory. */
function managerIdOf(enterprise: Record<string, unknown> | undefined): string | null {
  const value = obj(enterprise?.manager)?.value;
  return isUuid(value) ? value : null;
}

/** Structural equality of JSON values, independent of key order (jsonb reorders keys). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  const oa = obj(a);
  const ob = obj(b);
  if (oa === undefined || ob === undefined) return false;
  const keys = Object.keys(oa);
  return keys.length === Object.keys(ob).length && keys.every((k) => Object.hasOwn(ob, k) && sameJson(oa[k], ob[k]));
}
