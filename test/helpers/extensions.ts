/** Extension declarations as an admin would write them for Okta's and Entra's custom attributes. */
export const OKTA_URN = "urn:okta:acme:1.0:user";
export const CONTOSO_URN = "urn:ietf:params:scim:schemas:extension:Contoso:2.0:User";

export const OKTA_EXTENSION = {
  schema: OKTA_URN,
  name: "AcmeUser",
  description: "Acme's custom Okta attributes",
  resource: "User",
  attributes: [
    { name: "costCode", type: "string", filterable: true, description: "Cost code" },
    { name: "badgeId", type: "string", uniqueness: "server", caseExact: true },
    { name: "isContractor", type: "boolean" },
    { name: "startDate", type: "dateTime" },
    { name: "level", type: "integer" },
  ],
};

/** Okta's costCode attribute as discovery shows it: the declaration with the defaults of RFC 7643 §2.2 filled in. */
export const OKTA_COST_CODE_AS_SHOWN = {
  name: "costCode",
  type: "string",
  multiValued: false,
  description: "Cost code",
  required: false,
  caseExact: false,
  mutability: "readWrite",
  returned: "default",
  uniqueness: "none",
};

export const CONTOSO_EXTENSION = {
  schema: CONTOSO_URN,
  name: "ContosoUser",
  resource: "User",
  attributes: [
    { name: "costCenterCode", type: "string", filterable: true },
    { name: "employeeBadge", type: "string", uniqueness: "server" },
    { name: "secretNote", type: "string", returned: "never" },
    { name: "homeSite", type: "complex", subAttributes: [{ name: "code" }, { name: "floor", type: "integer" }] },
  ],
};

/** A Group extension as an admin would declare it for Entra's custom group attributes. */
export const CONTOSO_GROUP_URN = "urn:ietf:params:scim:schemas:extension:Contoso:2.0:Group";

export const CONTOSO_GROUP_EXTENSION = {
  resource: "Group",
  schema: CONTOSO_GROUP_URN,
  name: "ContosoGroup",
  attributes: [
    { name: "costCenterCode", type: "string", filterable: true },
    { name: "groupCode", type: "string", uniqueness: "server", caseExact: true },
    { name: "mailEnabled", type: "boolean" },
    { name: "createdOn", type: "dateTime", mutability: "immutable" },
    { name: "internalNote", type: "string", returned: "never" },
    { name: "owners", type: "complex", multiValued: true, subAttributes: [{ name: "value" }, { name: "display" }] },
  ],
};

/**
 * A User extension that holds secrets (`returned: "never"`): a top-level one named `pin`, and `recovery.code` inside a
 * complex attribute; `site` and `recovery.hint` beside them are not secret, so a test can tell redaction from loss.
 */
export const secretsExtension = (schema: string, name: string, pin: string) => ({
  schema,
  name,
  resource: "User",
  attributes: [
    { name: pin, type: "string", returned: "never" },
    { name: "site", type: "string" },
    { name: "recovery", type: "complex", subAttributes: [{ name: "code", returned: "never" }, { name: "hint" }] },
  ],
});
