import { MAX_DISPLAY_NAME_LENGTH, MAX_EMAIL_LENGTH, MAX_USER_NAME_LENGTH } from "../limits.js";
import { attribute, complex, multiValued } from "./define.js";
import type { SchemaDefinition } from "./types.js";

/** RFC 7643 §8.7.1, "urn:ietf:params:scim:schemas:core:2.0:User"; the attributes Roster keeps for a user. */
export const USER_SCHEMA_DEFINITION: SchemaDefinition = {
  id: "urn:ietf:params:scim:schemas:core:2.0:User",
  name: "User",
  description: "User Account",
  attributes: [
    attribute(
      "userName",
      "Unique identifier for the User, typically used by the user to directly authenticate to the service " +
        "provider.  Each User MUST include a non-empty userName value.  This identifier MUST be unique across the " +
        "service provider's entire set of Users.  REQUIRED.",
      { required: true, uniqueness: "server", maxLength: MAX_USER_NAME_LENGTH },
    ),
    complex(
      "name",
      "The components of the user's real name.  Providers MAY return just the full name as a single string in the " +
        "formatted sub-attribute, or they MAY return just the individual component attributes using the other " +
        "sub-attributes, or they MAY return both.",
      [
        attribute(
          "formatted",
          "The full name, including all middle names, titles, and suffixes as appropriate, formatted for display " +
            "(e.g., 'Ms. Barbara J Jensen, III').",
        ),
        attribute("familyName", "The family name of the User, or last name in most Western languages."),
        attribute("givenName", "The given name of the User, or first name in most Western languages."),
        attribute("middleName", "The middle name(s) of the User."),
        attribute("honorificPrefix", "The honorific prefix(es) of the User, or title in most Western languages."),
        attribute("honorificSuffix", "The honorific suffix(es) of the User, or suffix in most Western languages."),
      ],
    ),
    attribute(
      "displayName",
      "The name of the User, suitable for display to end-users.  The name SHOULD be the full name of the User " +
        "being described, if known.",
      { maxLength: MAX_DISPLAY_NAME_LENGTH },
    ),
    attribute(
      "nickName",
      "The casual way to address the user in real life, e.g., 'Bob' or 'Bobby' instead of 'Robert'.",
    ),
    attribute("profileUrl", "A fully qualified URL pointing to a page representing the User's online profile.", {
      type: "reference",
      referenceTypes: ["external"],
    }),
    attribute("title", 'The user\'s title, such as "Vice President."'),
    attribute(
      "userType",
      "Used to identify the relationship between the organization and the user.  Typical values used might be " +
        "'Contractor', 'Employee', 'Intern', 'Temp', 'External', and 'Unknown', but any value may be used.",
    ),
    attribute(
      "preferredLanguage",
      "Indicates the User's preferred written or spoken language.  Generally used for selecting a localized user " +
        "interface; e.g., 'en_US' specifies the language English and country US.",
    ),
    attribute(
      "locale",
      "Used to indicate the User's default location for purposes of localizing items such as currency, date time " +
        "format, or numerical representations.",
    ),
    attribute(
      "timezone",
      "The User's time zone in the 'Olson' time zone database format, e.g., 'America/Los_Angeles'.",
    ),
    attribute("active", "A Boolean value indicating the User's administrative status.", { type: "boolean" }),
    attribute(
      "password",
      "The User's cleartext password.  This attribute is intended to be used as a means to specify an initial " +
        "password when creating a new User or to reset an existing User's password.",
      { mutability: "writeOnly", returned: "never" },
    ),
    multiValued("emails", "Email addresses for the user.  Canonical type values of 'work', 'home', and 'other'.", {
      valueDescription: "Email addresses for the user.",
      typeDescription: "A label indicating the attribute's function, e.g., 'work' or 'home'.",
      canonicalTypes: ["work", "home", "other"],
      valueMaxLength: MAX_EMAIL_LENGTH,
    }),
    multiValued("phoneNumbers", "Phone numbers for the User.", {
      valueDescription: "Phone number of the User.",
      typeDescription: "A label indicating the attribute's function, e.g., 'work', 'home', 'mobile'.",
      canonicalTypes: ["work", "home", "mobile", "fax", "pager", "other"],
    }),
    multiValued("ims", "Instant messaging addresses for the User.", {
      valueDescription: "Instant messaging address for the User.",
      typeDescription: "A label indicating the attribute's function, e.g., 'aim', 'gtalk', 'xmpp'.",
      canonicalTypes: ["aim", "gtalk", "icq", "xmpp", "msn", "skype", "qq", "yahoo"],
    }),
    multiValued("photos", "URLs of photos of the User.", {
      valueDescription: "URL of a photo of the User.",
      valueType: "reference",
      referenceTypes: ["external"],
      typeDescription: "A label indicating the attribute's function, i.e., 'photo' or 'thumbnail'.",
      canonicalTypes: ["photo", "thumbnail"],
    }),
    complex(
      "addresses",
      "A physical mailing address for this User.  Canonical type values of 'work', 'home', and 'other'.",
      [
        attribute(
          "formatted",
          "The full mailing address, formatted for display or use with a mailing label.  This attribute MAY " +
            "contain newlines.",
        ),
        attribute(
          "streetAddress",
          "The full street address component, which may include house number, street name, P.O. box, and " +
            "multi-line extended street address information.  This attribute MAY contain newlines.",
        ),
        attribute("locality", "The city or locality component."),
        attribute("region", "The state or region component."),
        attribute("postalCode", "The zip code or postal code component."),
        attribute("country", "The country name component."),
        attribute("type", "A label indicating the attribute's function, e.g., 'work' or 'home'.", {
          canonicalValues: ["work", "home", "other"],
        }),
        // RFC 7643 §4.1.2 gives addresses a primary; §8.7.1 omits it. Kept so IdPs that send it are not refused.
        attribute("primary", "A Boolean value indicating the 'primary' or preferred address.", { type: "boolean" }),
      ],
      { multiValued: true },
    ),
    complex(
      "groups",
      "A list of groups to which the user belongs, either through direct membership, through nested groups, or " +
        "dynamically calculated.",
      [
        attribute("value", "The identifier of the User's group.", { mutability: "readOnly", resourceId: true }),
        attribute("$ref", "The URI of the corresponding 'Group' resource to which the user belongs.", {
          type: "reference",
          referenceTypes: ["User", "Group"],
          mutability: "readOnly",
          filterable: false,
        }),
        attribute("display", "A human-readable name, primarily used for display purposes.  READ-ONLY.", {
          mutability: "readOnly",
          filterable: false,
        }),
        attribute("type", "A label indicating the attribute's function, e.g., 'direct' or 'indirect'.", {
          canonicalValues: ["direct", "indirect"],
          mutability: "readOnly",
          filterable: false,
        }),
      ],
      { multiValued: true, mutability: "readOnly" },
    ),
    multiValued("entitlements", "A list of entitlements for the User that represent a thing the User has.", {
      valueDescription: "The value of an entitlement.",
      typeDescription: "A label indicating the attribute's function.",
    }),
    multiValued("roles", "A list of roles for the User that collectively represent who the User is, e.g., 'Student'.", {
      valueDescription: "The value of a role.",
      typeDescription: "A label indicating the attribute's function.",
    }),
    multiValued("x509Certificates", "A list of certificates issued to the User.", {
      valueDescription: "The value of an X.509 certificate.",
      valueType: "binary",
      typeDescription: "A label indicating the attribute's function.",
    }),
  ],
};
