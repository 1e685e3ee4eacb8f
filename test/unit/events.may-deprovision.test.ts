import { describe, expect, it } from "vitest";
import { mayDeprovision, type OutboxRow } from "../../src/storage/event-port.js";

const row = (event: string, data: unknown): OutboxRow => ({
  id: "00000000-0000-7000-8000-000000000000",
  event,
  orderingKey: "k",
  data: JSON.stringify(data),
  body: null,
});

// The guard (roster_route_events) counts a user.deleted and a user.updated whose data's `active` is false: the
// test that spares every other batch the guard's work must never miss one of those.
describe("mayDeprovision", () => {
  it("matches every change the guard counts", () => {
    expect(mayDeprovision(row("user.deleted", { id: "x", active: true }))).toBe(true);
    expect(mayDeprovision(row("user.updated", { id: "x", active: false }))).toBe(true);
    expect(mayDeprovision(row("user.updated", { id: "x", active: "false" }))).toBe(true);
    expect(mayDeprovision({ ...row("user.updated", {}), data: '{"id": "x", "active" : false}' })).toBe(true);
  });

  it("spares changes that deprovision nothing", () => {
    expect(mayDeprovision(row("user.updated", { id: "x", active: true }))).toBe(false);
    expect(mayDeprovision(row("user.updated", { id: "x" }))).toBe(false);
    expect(mayDeprovision(row("user.created", { id: "x", active: false }))).toBe(false);
    expect(mayDeprovision(row("group.user_removed", { id: "g", active: false }))).toBe(false);
  });
});
