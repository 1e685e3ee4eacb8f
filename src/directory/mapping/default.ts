/**
 * The data mapping used when a SCIM client has none: SCIM user → identity traits
 * `{username, email, name: {first, last, formatted}}`. `email` is the primary email, else the first one; a key whose
 * value is missing is left out (JSONata drops undefined values from objects). Documented in docs/scim-users.md.
 * No imports: the admin portal's bundle shows the same expression instead of a copy.
 */
export const DEFAULT_MAPPING = `{
  "username": userName,
  "email": $append(emails[primary = true].value, emails.value)[0],
  "name": {
    "first": name.givenName,
    "last": name.familyName,
    "formatted": name.formatted ? name.formatted : displayName
  }
}`;

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const optionalString = (v: unknown): v is string | undefined => v === undefined || typeof v === "string";

/**
 * DEFAULT_MAPPING in plain code, for the shapes a validated SCIM user has (strings, an array of email objects with a
 * string value and a boolean primary). It yields exactly what the JSONata expression yields after the JSON round
 * trip (test/unit/mapping.default-traits.test.ts compares them); `undefined` means "another shape: evaluate the
 * expression". Plain code, because evaluating JSONata on every write costs more CPU than the rest of a PATCH's domain
 * logic.
 */
export function defaultTraits(user: Record<string, unknown>): Record<string, unknown> | undefined {
  const { userName, emails, name, displayName } = user;
  if (!optionalString(userName) || !optionalString(displayName)) return undefined;
  let email: string | undefined;
  if (emails !== undefined) {
    if (!Array.isArray(emails)) return undefined;
    let first: string | undefined;
    for (const e of emails) {
      if (!isPlain(e) || !optionalString(e.value) || (e.primary !== undefined && typeof e.primary !== "boolean")) {
        return undefined;
      }
      if (e.value === undefined) continue;
      first ??= e.value;
      if (e.primary === true && email === undefined) email = e.value;
    }
    email ??= first;
  }
  let first: unknown;
  let last: unknown;
  let formatted: unknown;
  if (name !== undefined) {
    if (!isPlain(name)) return undefined;
    ({ givenName: first, familyName: last, formatted } = name);
    if (!optionalString(first) || !optionalString(last) || !optionalString(formatted)) return undefined;
  }
  const traitsName: Record<string, unknown> = {};
  if (first !== undefined) traitsName.first = first;
  if (last !== undefined) traitsName.last = last;
  const shown = formatted !== undefined && formatted !== "" ? formatted : displayName;
  if (shown !== undefined) traitsName.formatted = shown;
  const traits: Record<string, unknown> = {};
  if (userName !== undefined) traits.username = userName;
  if (email !== undefined) traits.email = email;
  traits.name = traitsName;
  return traits;
}
