import Fastify from "fastify";
import pg from "pg";

/**
 * The in-run ceiling: a bare Fastify route doing one primary-key SELECT on the bench's PostgreSQL and
 * returning a small JSON. Same pool size as Roster's default. Run as a child so it gets its own event loop, like
 * Roster. Announces `ceiling listening at <url>` on stdout.
 */
async function main(): Promise<void> {
  const url = process.env.BENCH_CEILING_DATABASE_URL;
  if (url === undefined || url === "") throw new Error("BENCH_CEILING_DATABASE_URL is not set");
  const pool = new pg.Pool({ connectionString: url, max: 20 });
  pool.on("error", () => {});
  const app = Fastify({ logger: false });

  app.get<{ Params: { id: string } }>("/identities/:id", async (req, reply) => {
    const { rows } = await pool.query<{ id: string; user_name: string }>(
      "select id, user_name from identities where id = $1",
      [req.params.id],
    );
    const row = rows[0];
    if (row === undefined) return reply.code(404).send({ error: "not found" });
    return { id: row.id, userName: row.user_name };
  });

  // When no user could be seeded (SCIM Users missing), the organization row stands in.
  app.get<{ Params: { id: string } }>("/organizations/:id", async (req, reply) => {
    const { rows } = await pool.query<{ id: string; name: string }>(
      "select id, name from organizations where id = $1",
      [req.params.id],
    );
    const row = rows[0];
    if (row === undefined) return reply.code(404).send({ error: "not found" });
    return { id: row.id, name: row.name };
  });

  const close = async () => {
    await app.close();
    await pool.end();
    process.exit(0);
  };
  process.once("SIGTERM", () => void close());
  process.once("SIGINT", () => void close());
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void close();
  }, 1000).unref();

  const address = await app.listen({ host: "127.0.0.1", port: 0 });
  process.stdout.write(`ceiling listening at ${address}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`ceiling: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
