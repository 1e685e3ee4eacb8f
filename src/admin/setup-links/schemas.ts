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
  UUID_PATTERN,
} from "../schemas/kit.js";

export const CreateSetupLinkBody = Type.Object({
  organization_id: Checked(Type.String({ pattern: UUID_PATTERN, "x-required": true }), {
    pattern: "{path} must be a UUID",
  }),
  intent: Checked(Enum(SETUP_INTENTS, undefined, "What the link sets up"), 'intent must be "directory_sync"'),
  expire_time: OptionalText(64, "RFC 3339; default: 7 days from now, at most 30 days"),
  return_url: OptionalText(2048, "Where the setup view's Done button leads (http:// or https://)"),
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
