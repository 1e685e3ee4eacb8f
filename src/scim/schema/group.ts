import { MAX_DISPLAY_NAME_LENGTH } from "../limits.js";
import { attribute, complex } from "./define.js";
import type { SchemaDefinition } from "./types.js";

/** RFC 7643 §4.2 and §8.7.1, "urn:ietf:params:scim:schemas:core:2.0:Group"; displayName is required. */
export const GROUP_SCHEMA_DEFINITION: SchemaDefinition = {
  id: "urn:ietf:params:scim:schemas:core:2.0:Group",
  name: "Group",
  description: "Group",
  attributes: [
    attribute("displayName", "A human-readable name for the Group.  REQUIRED.", {
      required: true,
      maxLength: MAX_DISPLAY_NAME_LENGTH,
    }),
    complex(
      "members",
      "A list of members of the Group.",
      [
        attribute("value", "Identifier of the member of this Group.", { mutability: "immutable", resourceId: true }),
        attribute("$ref", "The URI corresponding to a SCIM resource that is a member of this Group.", {
          type: "reference",
          referenceTypes: ["User", "Group"],
          mutability: "immutable",
          filterable: false,
        }),
        // The member's userName or group name, resolved by the server.
        attribute("display", "A human-readable name of the member, primarily used for display purposes.", {
          mutability: "readOnly",
          filterable: false,
        }),
        attribute("type", "A label indicating the type of resource, e.g., 'User' or 'Group'.", {
          canonicalValues: ["User", "Group"],
          mutability: "immutable",
          filterable: false,
        }),
      ],
      { multiValued: true },
    ),
  ],
};
