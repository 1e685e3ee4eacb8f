import { describe, expect, it } from "vitest";
import { isDatabaseUnavailable } from "../../src/storage/errors.js";

const coded = (code: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`error ${code}`), { code, ...extra });

describe("isDatabaseUnavailable", () => {
  it.each([
    ["a connection exception (class 08)", coded("08006")],
    ["a terminated backend (57P01)", coded("57P01")],
    ["a crashed server (57P02)", coded("57P02")],
    ["a server not accepting connections yet (57P03)", coded("57P03")],
    ["no connection slot left (53300)", coded("53300")],
    ["a statement timeout (57014)", coded("57014")],
    ["an idle transaction ended by the server (25P03)", coded("25P03")],
    ["a write on a server that is read only during a failover (25006)", coded("25006")],
    ["a refused connection", coded("ECONNREFUSED")],
    ["a reset connection", coded("ECONNRESET")],
    ["a missing Unix socket", coded("ENOENT", { syscall: "connect" })],
    ["pg's lost connection", new Error("Connection terminated unexpectedly")],
    ["pg-pool's connect timeout", new Error("timeout exceeded when trying to connect")],
    ["pg's client-side query timeout", new Error("Query read timeout")],
    ["a client that lost its connection", new Error("Client has encountered a connection error and is not queryable")],
    ["every address refused", new AggregateError([coded("ECONNREFUSED"), coded("ECONNREFUSED")], "refused")],
    ["a wrapped cause", new Error("wrapped", { cause: coded("ECONNRESET") })],
  ])("is true for %s", (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ["a unique violation", coded("23505")],
    ["a deadlock (retried, or a 500)", coded("40P01")],
    ["an invalid byte sequence", coded("22021")],
    ["a missing file", coded("ENOENT", { syscall: "open" })],
    ["a SQLSTATE-like node code that is not one", coded("0800")],
    ["an error whose message merely mentions a timeout", coded("XX000", { message: "Query read timeout" })],
    ["a plain error", new Error("something else")],
    ["not an error", "Connection terminated"],
    ["nothing", undefined],
  ])("is false for %s", (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
