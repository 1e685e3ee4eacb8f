import type { AttributeDefinition } from "./types.js";

type AttributeOptions = Partial<Omit<AttributeDefinition, "name" | "description">>;

/** RFC 7643 §2.2: the defaults of every characteristic; definitions state only what differs. */
export const attribute = (name: string, description: string, options: AttributeOptions = {}): AttributeDefinition => ({
  name,
  type: "string",
  multiValued: false,
  description:
    options.maxLength === undefined ? description : `${description}  At most ${options.maxLength} characters.`,
  required: false,
  caseExact: false,
  mutability: "readWrite",
  returned: "default",
  uniqueness: "none",
  ...options,
});

export const complex = (
  name: string,
  description: string,
  subAttributes: readonly AttributeDefinition[],
  options: AttributeOptions = {},
): AttributeDefinition => attribute(name, description, { type: "complex", subAttributes, ...options });

const PRIMARY_DESCRIPTION =
  "A Boolean value indicating the 'primary' or preferred attribute value for this attribute.  " +
  "The primary attribute value 'true' MUST appear no more than once.";

interface MultiValuedOptions {
  readonly valueDescription: string;
  readonly valueType?: AttributeDefinition["type"];
  readonly referenceTypes?: readonly string[];
  readonly typeDescription: string;
  readonly canonicalTypes?: readonly string[];
  readonly valueMaxLength?: number;
}

/** RFC 7643 §2.4: the value/display/type/primary shape shared by emails, phoneNumbers, ims, photos, roles, … */
export const multiValued = (name: string, description: string, options: MultiValuedOptions): AttributeDefinition => {
  const valueOptions: AttributeOptions = {
    type: options.valueType ?? "string",
    ...(options.valueMaxLength === undefined ? {} : { maxLength: options.valueMaxLength }),
  };
  const typeOptions: AttributeOptions = {};
  return complex(
    name,
    description,
    [
      attribute(
        "value",
        options.valueDescription,
        options.referenceTypes === undefined
          ? valueOptions
          : { ...valueOptions, referenceTypes: options.referenceTypes },
      ),
      attribute("display", "A human-readable name, primarily used for display purposes.  READ-ONLY."),
      attribute(
        "type",
        options.typeDescription,
        options.canonicalTypes === undefined ? typeOptions : { canonicalValues: options.canonicalTypes },
      ),
      attribute("primary", PRIMARY_DESCRIPTION, { type: "boolean" }),
    ],
    { multiValued: true },
  );
};
