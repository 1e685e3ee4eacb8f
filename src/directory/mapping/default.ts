/**
 * The data mapping used when a SCIM client has none (issue 3 point 7): SCIM user → identity traits
 * `{username, email, name: {first, last, formatted}}`. `email` is the primary email, else the first one; a key whose
 * value is missing is left out (JSONata drops undefined values from objects). Documented in docs/scim-users.md.
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
