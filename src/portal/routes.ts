import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";

const FILES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "portal.js": "text/javascript; charset=utf-8",
  "portal.css": "text/css; charset=utf-8",
};

/** A strict CSP: the page loads only its own script and style and talks only to this origin's admin API. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The admin portal (DESIGN.md): a static page over the admin API — organizations, SCIM clients (the secret shown
 * once), webhook settings and the webhook event log with resend. It holds no data of its own; the admin token is
 * kept in the browser tab's sessionStorage.
 */
export function registerPortal(app: FastifyInstance): void {
  const files = new Map(
    Object.entries(FILES).map(([name, type]) => [
      name,
      { type, body: readFileSync(new URL(`./static/${name}`, import.meta.url)) },
    ]),
  );
  app.get<{ Params: { file?: string } }>("/portal/:file?", async (req, reply) => {
    const file = files.get(req.params.file === undefined || req.params.file === "" ? "index.html" : req.params.file);
    if (file === undefined) return reply.code(404).type("text/plain").send("not found");
    return reply
      .type(file.type)
      .header("content-security-policy", CSP)
      .header("x-content-type-options", "nosniff")
      .header("referrer-policy", "no-referrer")
      .header("cache-control", "no-cache")
      .send(file.body);
  });
}
