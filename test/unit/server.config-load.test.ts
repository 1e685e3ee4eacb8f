import { describe, expect, it } from "vitest";
import { ConfigError, describeConfig, loadConfig } from "../../src/config.js";

const KEY = "k".repeat(32);

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      host: "127.0.0.1",
      port: 8080,
      database: { kind: "embedded", persistent: true },
      dataDir: "./.roster",
      adminToken: undefined,
      secrets: undefined,
      publicUrl: undefined,
      logLevel: "info",
    });
  });

  it("reads memory: and postgres:// targets", () => {
    expect(loadConfig({ ROSTER_DATABASE_URL: "memory:" }).database).toEqual({ kind: "embedded", persistent: false });
    expect(
      loadConfig({ ROSTER_DATABASE_URL: "postgres://u:p@127.0.0.1:5432/db", ROSTER_SECRETS: KEY }).database,
    ).toEqual({ kind: "server", url: "postgres://u:p@127.0.0.1:5432/db", pooling: "session" });
  });

  it("reads ROSTER_DATABASE_POOLING for a server, and refuses it without one or with another value", () => {
    const server = { ROSTER_DATABASE_URL: "postgres://u@127.0.0.1:6432/db", ROSTER_SECRETS: KEY };
    expect(loadConfig({ ...server, ROSTER_DATABASE_POOLING: "transaction" }).database).toMatchObject({
      kind: "server",
      pooling: "transaction",
    });
    expect(() => loadConfig({ ...server, ROSTER_DATABASE_POOLING: "statement" })).toThrow(/ROSTER_DATABASE_POOLING/);
    expect(() => loadConfig({ ROSTER_DATABASE_POOLING: "transaction" })).toThrow(/needs ROSTER_DATABASE_URL/);
    expect(loadConfig({ ROSTER_DATABASE_POOLING: "session" }).database).toEqual({ kind: "embedded", persistent: true });
  });

  it("splits ROSTER_SECRETS into a key ring", () => {
    const c = loadConfig({ ROSTER_SECRETS: `${KEY},${"z".repeat(40)}` });
    expect(c.secrets?.map((s) => s.length)).toEqual([32, 40]);
  });

  it("reports every bad variable at once", () => {
    try {
      loadConfig({
        ROSTER_PORT: "http",
        ROSTER_DATABASE_URL: "mysql://x",
        ROSTER_SECRETS: "short",
        ROSTER_LOG_LEVEL: "loud",
        ROSTER_PUBLIC_URL: "ftp://x",
        ROSTER_ADMIN_TOKEN: "tiny",
      });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const problems = (e as ConfigError).problems.join("\n");
      for (const name of [
        "ROSTER_PORT",
        "ROSTER_DATABASE_URL",
        "ROSTER_SECRETS",
        "ROSTER_LOG_LEVEL",
        "ROSTER_PUBLIC_URL",
        "ROSTER_ADMIN_TOKEN",
      ]) {
        expect(problems).toContain(name);
      }
    }
  });

  it("bounds database waits by default and reads the ROSTER_DATABASE_*_TIMEOUT_MS variables", () => {
    expect(loadConfig({}).databaseTimeouts).toEqual({
      connectMs: 5000,
      statementMs: 30000,
      idleInTransactionMs: 60000,
    });
    expect(
      loadConfig({
        ROSTER_DATABASE_CONNECT_TIMEOUT_MS: "1500",
        ROSTER_DATABASE_STATEMENT_TIMEOUT_MS: "0",
        ROSTER_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: "120000",
      }).databaseTimeouts,
    ).toEqual({ connectMs: 1500, statementMs: 0, idleInTransactionMs: 120000 });
    for (const bad of ["-1", "50", "soon", "3600001"]) {
      expect(() => loadConfig({ ROSTER_DATABASE_STATEMENT_TIMEOUT_MS: bad })).toThrow(
        /ROSTER_DATABASE_STATEMENT_TIMEOUT_MS: .* must be 0 \(no limit\) or an integer from 100 to 3600000/,
      );
    }
  });

  it("requires ROSTER_SECRETS with an existing PostgreSQL", () => {
    expect(() => loadConfig({ ROSTER_DATABASE_URL: "postgres://127.0.0.1/db" })).toThrow(/ROSTER_SECRETS: required/);
  });

  it("masks secrets when describing the configuration", () => {
    const c = loadConfig({
      ROSTER_DATABASE_URL: "postgres://user:hunter2@127.0.0.1/db",
      ROSTER_SECRETS: KEY,
      ROSTER_ADMIN_TOKEN: "admin-token-0123456789",
    });
    const text = JSON.stringify(describeConfig(c));
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain(KEY);
    expect(text).not.toContain("admin-token-0123456789");
  });
});
