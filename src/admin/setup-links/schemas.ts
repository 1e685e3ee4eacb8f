import { Type } from "@sinclair/typebox";
import { SETUP_INTENTS } from "../../directory/setup-links/types.js";
import {
  Checked,
  Enum,
  NullableText,
  NullableTime,
  OptionalText,
  PageQuery,
  Time,
  Nullable,
  UUID_PATTERN,
} from "../schemas/kit.js";
import { Retry } from "../schemas/scim-clients.js";

export const CreateSetupLinkBody = Type.Object({
  organization_id: Checked(Type.String({ pattern: UUID_PATTERN, "x-required": true }), {
    pattern: "{path} must be a UUID",
  }),
  intent: Checked(Enum(SETUP_INTENTS, undefined, "What the link sets up"), 'intent must be "directory_sync"'),
  expire_time: OptionalText(64, "RFC 3339; default: 7 days from now, at most 30 days"),
  return_url: OptionalText(2048, "Where the setup view's Done button leads (http:// or https://)"),
  tenant: OptionalText(256, "Given to the link's connections: copied into every webhook body"),
  product: OptionalText(256, "Given to the link's connections: copied into every webhook body"),
  webhook: Type.Optional(
    Nullable(
      Type.Object(
        {
          url: OptionalText(2048, "An absolute http:// or https:// URL"),
          secret: OptionalText(1024, "At least 16 characters; required with url. Stored encrypted, never returned"),
          retry: Retry,
        },
        {
          description:
            "The webhook every connection created through the link starts with: its connection.created, " +
            "connection.activated and directory events are delivered there, signed with the secret",
        },
      ),
    ),
  ),
});

export const SetupLinkParams = Type.Object({ id: Type.String() });
export const ListSetupLinksQuery = Type.Object({ ...PageQuery, organization_id: Type.Optional(Type.String()) });

export const SetupLinkJson = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  intent: Type.String(),
  state: Type.String({ description: "ACTIVE, EXPIRED or REVOKED" }),
  return_url: NullableText,
  create_time: Time,
  expire_time: Time,
  revoke_time: NullableTime,
  first_open_time: NullableTime,
  tenant: Type.String(),
  product: Type.String(),
  webhook: Nullable(
    Type.Object(
      { url: Type.String(), retry: Type.String() },
      { description: "The webhook the link's connections get; its secret is never returned" },
    ),
  ),
  url: Type.Optional(Type.String({ description: "Shown once, on create: {ROSTER_PUBLIC_URL}/portal/setup/<token>" })),
});

export const SetupSessionJson = Type.Object({
  organization_id: Type.String(),
  organization_name: Type.String(),
  link_id: Type.String(),
  expire_time: Time,
  return_url: NullableText,
  csrf_token: Type.String({ description: "Send it as X-CSRF-Token with every write" }),
  max_connections: Type.Integer(),
});
