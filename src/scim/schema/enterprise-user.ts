import { ENTERPRISE_KEY } from "../../directory/identities/document.js";
import { MAX_EMPLOYEE_NUMBER_LENGTH } from "../limits.js";
import { attribute, complex } from "./define.js";
import type { SchemaDefinition } from "./types.js";

/**
 * RFC 7643 §4.3 and §8.7.1, the Enterprise User extension. Its URN is the key under which the directory stores these
 * attributes (it indexes employeeNumber and resolves the manager from there), so the directory names it once.
 */
export const ENTERPRISE_USER_SCHEMA_DEFINITION: SchemaDefinition = {
  id: ENTERPRISE_KEY,
  name: "EnterpriseUser",
  description: "Enterprise User",
  attributes: [
    attribute(
      "employeeNumber",
      "Numeric or alphanumeric identifier assigned to a person, typically based on order of hire or association " +
        "with an organization.",
      { maxLength: MAX_EMPLOYEE_NUMBER_LENGTH },
    ),
    attribute("costCenter", "Identifies the name of a cost center."),
    attribute("organization", "Identifies the name of an organization."),
    attribute("division", "Identifies the name of a division."),
    attribute("department", "Identifies the name of a department."),
    complex(
      "manager",
      "The User's manager.  A complex type that optionally allows service providers to represent organizational " +
        "hierarchy by referencing the 'id' attribute of another User.",
      [
        attribute("value", "The id of the SCIM resource representing the User's manager."),
        attribute("$ref", "The URI of the SCIM resource representing the User's manager.", {
          type: "reference",
          referenceTypes: ["User"],
          filterable: false,
        }),
        // Resolved by the server, only for a manager in the same organization.
        attribute("displayName", "The displayName of the User's manager.  OPTIONAL and READ-ONLY.", {
          mutability: "readOnly",
          filterable: false,
        }),
      ],
    ),
  ],
};
