import { MAX_EXTERNAL_ID_LENGTH } from "../limits.js";
import { attribute, complex } from "./define.js";
import type { AttributeDefinition } from "./types.js";

/**
 * RFC 7643 §3.1: id, externalId and meta belong to every resource but to no schema's attribute list. The registry
 * still resolves them (paths, projection); /Schemas does not list them.
 */
export const COMMON_ATTRIBUTES: readonly AttributeDefinition[] = [
  attribute("id", "Unique identifier for the SCIM resource as defined by the service provider.", {
    caseExact: true,
    mutability: "readOnly",
    returned: "always",
    uniqueness: "server",
  }),
  attribute("externalId", "A String that is an identifier for the resource as defined by the provisioning client.", {
    caseExact: true,
    maxLength: MAX_EXTERNAL_ID_LENGTH,
  }),
  complex(
    "meta",
    "A complex attribute containing resource metadata.",
    [
      attribute("resourceType", "The name of the resource type of the resource.", {
        caseExact: true,
        mutability: "readOnly",
      }),
      attribute("created", 'The "DateTime" that the resource was added to the service provider.', {
        type: "dateTime",
        mutability: "readOnly",
      }),
      attribute("lastModified", "The most recent DateTime that the details of this resource were updated.", {
        type: "dateTime",
        mutability: "readOnly",
      }),
      attribute("location", "The URI of the resource being returned.", {
        type: "reference",
        referenceTypes: ["uri"],
        caseExact: true,
        mutability: "readOnly",
        filterable: false,
      }),
      attribute("version", "The version of the resource being returned.", {
        caseExact: true,
        mutability: "readOnly",
        filterable: false,
      }),
    ],
    { mutability: "readOnly" },
  ),
];
