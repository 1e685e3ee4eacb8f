import { type Static, Type } from "@sinclair/typebox";

/** A connection's deprovisioning guard settings (docs/deprovisioning.md); fields absent stay as they are. */
export const GuardSettingsBody = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: "Whether the guard holds mass deprovisioning (default true)" })),
    share_percent: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: "Percent of active users (default 20)" }),
    ),
    min_count: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_000_000, description: "Absolute count (default 50)" }),
    ),
    window_seconds: Type.Optional(
      Type.Integer({ minimum: 60, maximum: 604_800, description: "Rolling window (default 3600)" }),
    ),
  },
  { additionalProperties: false },
);

export type GuardSettingsPatch = Static<typeof GuardSettingsBody>;

/** The update-mask paths of the guard on the SCIM client resource (`deprovisioning_guard.share_percent`, …). */
export const GUARD_MASK_PATHS = [
  "deprovisioning_guard",
  "deprovisioning_guard.enabled",
  "deprovisioning_guard.share_percent",
  "deprovisioning_guard.min_count",
  "deprovisioning_guard.window_seconds",
] as const;
