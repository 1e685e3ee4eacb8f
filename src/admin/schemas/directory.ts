import { Type } from "@sinclair/typebox";
import { MAX_IDENTIFIER_LENGTH, MAX_ORGANIZATION_NAME_LENGTH } from "../limits.js";
import { ADMIN_ROLES } from "../tokens/types.js";
import {
  AnyObject,
  Checked,
  Enum,
  NullableText,
  NullableTime,
  OptionalFlag,
  OptionalTime,
  PageQuery,
  RequiredText,
  Time,
  Wrapped,
} from "./kit.js";

/** Organizations, identities, the directory browser and admin tokens. */

export const IdParams = Type.Object({ id: Type.String() });
export const PageOnlyQuery = Type.Object(PageQuery);

export const CreateOrganizationBody = Type.Object({
  name: RequiredText(MAX_ORGANIZATION_NAME_LENGTH),
  keys_follow_identity: OptionalFlag("API keys of an inactive identity are suspended (default true)"),
});

/** `{organization: {...}}` or the fields themselves; fields present change, the others stay. */
export const UpdateOrganizationBody = Wrapped(
  "organization",
  Type.Object({
    name: Type.Optional(RequiredText(MAX_ORGANIZATION_NAME_LENGTH)),
    keys_follow_identity: OptionalFlag(),
  }),
);

export const OrganizationJson = Type.Object({
  id: Type.String(),
  name: Type.String(),
  keys_follow_identity: Type.Boolean(),
  create_time: Time,
});

export const IdentityJson = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  state: Type.String({ enum: ["active", "inactive"] }),
  user_name: Type.String(),
  traits: AnyObject(),
  scim: AnyObject(),
  has_password: Type.Boolean(),
  create_time: Time,
  update_time: Time,
});

export const ListIdentitiesQuery = Type.Object({ ...PageQuery, organization_id: Type.Optional(Type.String()) });

export const VerifyPasswordBody = Type.Object({
  identifier: RequiredText(MAX_IDENTIFIER_LENGTH, "The user name or an email address"),
  password: Type.Optional(Type.Unknown({ description: "The password; anything but a string never matches" })),
});

export const OrgParams = Type.Object({ orgId: Type.String() });
export const OrgItemParams = Type.Object({ orgId: Type.String(), id: Type.String() });
export const DirectoryQuery = Type.Object({
  ...PageQuery,
  filter: Type.Optional(Type.String({ description: 'A SCIM eq filter, e.g. userName eq "ada@example.com"' })),
});

export const UserSummaryJson = Type.Object({
  id: Type.String(),
  user_name: Type.String(),
  external_id: NullableText,
  display_name: NullableText,
  email: NullableText,
  active: Type.Boolean(),
  groups: Type.Array(Type.Object({ id: Type.String(), display_name: Type.Unknown() })),
  create_time: Time,
  update_time: Time,
});

export const UserDetailJson = Type.Composite([
  UserSummaryJson,
  Type.Object({ scim: AnyObject(), traits: AnyObject(), has_password: Type.Boolean() }),
]);

export const GroupJson = Type.Object({
  id: Type.String(),
  display_name: Type.String(),
  external_id: NullableText,
  member_count: Type.Integer(),
  create_time: Time,
  update_time: Time,
});

export const GroupDetailJson = Type.Composite([GroupJson, Type.Object({ members: Type.Array(Type.Unknown()) })]);

export const CreateAdminTokenBody = Type.Object({
  name: RequiredText(256),
  role: Checked(Enum(ADMIN_ROLES), `role must be one of ${ADMIN_ROLES.join(", ")}`),
  expire_time: OptionalTime(),
});

export const AdminTokenJson = Type.Object({
  id: Type.String(),
  name: Type.String(),
  role: Type.String(),
  state: Type.String(),
  expire_time: NullableTime,
  revoke_time: NullableTime,
  last_used_time: NullableTime,
  create_time: Time,
  token: Type.Optional(Type.String({ description: "Shown once, on create" })),
});
