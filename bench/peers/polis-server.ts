/**
 * Ory Polis's SCIM server as its own Next.js route does it (`/api/scim/v2.0/[...directory]`): the request's parts
 * handed to `directorySyncController.requests.handle`, the answer written as JSON. Without Next.js around it, so
 * the comparison measures Polis's SCIM engine, not a web framework. The bench starts it as a child process; it
 * loads Polis from the scratch folder named by POLIS_DIR (never from Roster's own dependencies).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";

interface Directory {
  readonly id: string;
  readonly scim: { readonly path: string; readonly secret: string };
}

interface DirectorySync {
  readonly directories: {
    create(params: { name: string; tenant: string; product: string; type: string }): Promise<{
      data: Directory | null;
      error: { message: string } | null;
    }>;
  };
  readonly requests: {
    handle(request: {
      method: string;
      body: unknown;
      directoryId: string;
      resourceType: string;
      resourceId: string | undefined;
      apiSecret: string | null;
      query: { count?: number; startIndex?: number; filter?: string };
    }): Promise<{ status: number; data: unknown }>;
  };
}

type Controllers = (options: Record<string, unknown>) => Promise<{ directorySyncController: DirectorySync }>;

const SCIM_PATH = "/api/scim/v2.0";

async function main(): Promise<void> {
  const dir = required("POLIS_DIR");
  const databaseUrl = required("POLIS_DATABASE_URL");
  const load = createRequire(join(dir, "package.json"));
  const controllers = (load("@boxyhq/saml-jackson") as { default: Controllers }).default;
  const { directorySyncController: dsync } = await controllers({
    externalUrl: "http://127.0.0.1",
    samlPath: "/api/oauth/saml",
    scimPath: SCIM_PATH,
    db: { engine: "sql", type: "postgres", url: databaseUrl },
    noAnalytics: true,
  });

  const server = createServer((req, res) => {
    handle(dsync, req, res).catch((e: unknown) => {
      process.stderr.write(`polis-server: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no TCP address");
    process.stdout.write(`polis listening on http://127.0.0.1:${address.port}\n`);
  });
}

async function handle(dsync: DirectorySync, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const text = await readBody(req);
  const body: unknown = text === "" ? undefined : JSON.parse(text);
  if (req.method === "POST" && url.pathname === "/bench/directories") {
    const { data, error } = await dsync.directories.create({
      name: "bench",
      tenant: "bench",
      product: "bench",
      type: "okta-scim-v2",
    });
    if (data === null) throw new Error(`creating a directory failed: ${error?.message ?? "unknown"}`);
    return json(res, 201, { id: data.id, base: data.scim.path, secret: data.scim.secret });
  }
  if (!url.pathname.startsWith(`${SCIM_PATH}/`)) return json(res, 404, { detail: "not found" });
  const [directoryId = "", resource = "", resourceId] = url.pathname.slice(SCIM_PATH.length + 1).split("/");
  const authorization = req.headers.authorization ?? "";
  const count = url.searchParams.get("count");
  const startIndex = url.searchParams.get("startIndex");
  const filter = url.searchParams.get("filter");
  const answer = await dsync.requests.handle({
    method: req.method ?? "GET",
    body,
    directoryId,
    resourceType: resource.toLowerCase(),
    resourceId,
    apiSecret: authorization.startsWith("Bearer ") ? authorization.slice(7) : null,
    query: {
      ...(count === null ? {} : { count: Number(count) }),
      ...(startIndex === null ? {} : { startIndex: Number(startIndex) }),
      ...(filter === null ? {} : { filter }),
    },
  });
  json(res, answer.status, answer.data);
}

function json(res: ServerResponse, status: number, data: unknown): void {
  const text = JSON.stringify(data ?? {});
  res.writeHead(status, { "content-type": "application/scim+json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set`);
  return value;
}

main().catch((e: unknown) => {
  process.stderr.write(`polis-server: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
