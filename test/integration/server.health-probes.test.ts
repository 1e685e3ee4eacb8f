import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { useTestApp } from "../helpers/suite.js";

const { t } = useTestApp();

describe("health", () => {
  it("is alive without authentication", async () => {
    const res = await t.request({ method: "GET", url: "/health/alive" });
    expect(res.statusCode).toBe(200);
  });

  it("is ready when the database is reachable and migrated", async () => {
    const res = await t.request({ method: "GET", url: "/health/ready" });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe("ok");
  });

  it("is not ready while a migration is pending", async () => {
    const name = "0001-foundation";
    await sql`delete from kysely_migration where name = ${name}`.execute(t.db);
    try {
      const res = await t.request({ method: "GET", url: "/health/ready" });
      expect(res.statusCode).toBe(503);
    } finally {
      await sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(
        t.db,
      );
    }
  });

  it("serves Prometheus metrics", async () => {
    const res = await t.request({ method: "GET", url: "/metrics" });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain("process_cpu_seconds_total");
  });
});
