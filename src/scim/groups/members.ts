import type { Member } from "../../directory/groups/types.js";

/** Which member sub-attributes a response carries (RFC 7644 §3.9 projection of `members`). */
export interface MemberFields {
  readonly value: boolean;
  readonly display: boolean;
  readonly type: boolean;
  readonly ref: boolean;
}

/**
 * Renders members as the elements of a SCIM `members` array (RFC 7643 §4.2), without the brackets, so that chunks
 * of one list join with commas. Built as text: `value` is a UUID and `type` a fixed word, so only `display` and
 * the base URL need JSON escaping, and a chunk of thousands of members is one string, not thousands of objects.
 */
export function memberElements(members: readonly Member[], fields: MemberFields, baseUrl: string): string {
  const ref = JSON.stringify(baseUrl).slice(1, -1);
  const parts: string[] = new Array(members.length);
  for (let i = 0; i < members.length; i++) {
    const m = members[i] as Member;
    let text = "";
    if (fields.value) text += `,"value":"${m.value}"`;
    if (fields.display) text += `,"display":${JSON.stringify(m.display)}`;
    if (fields.type) text += `,"type":"${m.type}"`;
    if (fields.ref) text += `,"$ref":"${ref}/${m.type === "User" ? "Users" : "Groups"}/${m.value}"`;
    parts[i] = `{${text.slice(1)}}`;
  }
  return parts.join(",");
}

/** A whole `members` array as JSON text. */
export const memberList = (members: readonly Member[], fields: MemberFields, baseUrl: string): string =>
  `[${memberElements(members, fields, baseUrl)}]`;
