import { describe, expect, it } from "vitest";
import { mayDeprovision, type OutboxRow } from "../../src/storage/event-port.js";

const ID = "00000000-0000-7000-8000-000000000000";
const row = (event: string, data: unknown): OutboxRow => ({
  id: ID,
  event,
  orderingKey: "k",
  data: JSON.stringify(data),
  body: null,
});
const keyRow = (event: string, target: { keyActor: string } | { keyId: string }): OutboxRow => ({
  id: ID,
  event,
  orderingKey: "",
  data: "",
  body: null,
  ...target,
});

// The guard (roster_route_events) counts a user.deleted and a deactivation, which the key suspension row of the
// same batch stands for: the test that spares every other batch the guard's work must agree with it exactly.
describe("mayDeprovision", () => {
  it.each([
    ["a deletion", row("user.deleted", { id: "x", active: true }), true],
    ["a deactivation's key suspension", keyRow("api_key.suspended", { keyActor: ID }), true],
    ["an update of a user already inactive", row("user.updated", { id: "x", active: false }), false],
    ["an update of an active user", row("user.updated", { id: "x", active: true }), false],
    ["a creation of an inactive user", row("user.created", { id: "x", active: false }), false],
    ["a group's member removed", row("group.user_removed", { id: "g", active: false }), false],
    ["a deletion's key revocation (its user.deleted counts)", keyRow("api_key.revoked", { keyActor: ID }), false],
    ["one key suspended by name", keyRow("api_key.suspended", { keyId: ID }), false],
  ])("%s", (_what, r, expected) => {
    expect(mayDeprovision(r)).toBe(expected);
  });
});
