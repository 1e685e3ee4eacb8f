import { badRequest, type ScimError } from "../errors.js";
import { findKey, isObject } from "./json.js";
import type { MemberOp, MemberRef, PatchOpName, PatchPath } from "./types.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const invalidMember = (why: string): ScimError => badRequest("invalidValue", `members: ${why}`);

const memberValue = (raw: unknown): string => {
  if (typeof raw !== "string" || !UUID.test(raw.trim())) {
    throw invalidMember(`member value ${JSON.stringify(raw) ?? "undefined"} is not a valid UUID`);
  }
  return raw.trim().toLowerCase();
};

/** A member's type may be absent (inferred later, as Entra and Okta omit it) but, when present, is User or Group. */
const memberType = (raw: unknown): MemberRef["type"] => {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === "string" && raw.toLowerCase() === "user") return "User";
  if (typeof raw === "string" && raw.toLowerCase() === "group") return "Group";
  throw invalidMember(`member type ${JSON.stringify(raw)} is neither User nor Group`);
};

/** Entries of a members value: objects `{value, type?}` (display, $ref and the like are ignored) or bare ids. */
export const memberRefs = (raw: unknown): MemberRef[] => {
  if (raw === undefined || raw === null) return [];
  const items: unknown[] = Array.isArray(raw) ? raw : [raw];
  const refs = new Map<string, MemberRef>();
  for (const item of items) {
    const entry = isObject(item) ? item : { value: typeof item === "string" ? item : JSON.stringify(item) };
    const valueKey = findKey(entry, "value");
    const typeKey = findKey(entry, "type");
    const value = memberValue(valueKey === undefined ? undefined : entry[valueKey]);
    const type = memberType(typeKey === undefined ? undefined : entry[typeKey]);
    if (!refs.has(value)) refs.set(value, type === undefined ? { value } : { value, type });
  }
  return [...refs.values()];
};

/**
 * Turns an operation on Group `members` into a set-based membership change, or undefined when it asks
 * for nothing. `remove` with a value array removes exactly those (as Entra and JumpCloud send it), never all.
 */
export const memberOperation = (
  op: PatchOpName,
  path: PatchPath,
  value: unknown,
  hasValue: boolean,
): MemberOp | undefined => {
  if (path.sub !== undefined) {
    if (path.subDefinition?.mutability === "readOnly") return undefined;
    throw badRequest("invalidPath", `members.${path.sub} cannot be patched; add or remove members instead`);
  }
  if (path.filter !== undefined) {
    const [term, ...more] = path.filter;
    if (term === undefined || term.attribute !== "value" || more.length > 0) {
      throw badRequest("invalidPath", 'a members filter must be `members[value eq "<id>"]`');
    }
    const id = memberValue(term.value);
    if (op === "remove") return { kind: "remove", values: [id] };
    if (op === "replace") throw badRequest("invalidPath", "replace on a members value filter is not supported");
    const typeKey = isObject(value) ? findKey(value, "type") : undefined;
    const type = isObject(value) && typeKey !== undefined ? memberType(value[typeKey]) : undefined;
    return { kind: "add", members: [type === undefined ? { value: id } : { value: id, type }] };
  }
  if (op === "remove") {
    if (!hasValue || value === null) return { kind: "removeAll" };
    const values = memberRefs(value).map((m) => m.value);
    return values.length === 0 ? undefined : { kind: "remove", values };
  }
  const members = memberRefs(value);
  if (op === "replace") return { kind: "replace", members };
  return members.length === 0 ? undefined : { kind: "add", members };
};
