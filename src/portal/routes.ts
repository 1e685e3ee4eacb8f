import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import type { FastifyInstance, FastifyReply } from "fastify";
import { DIST_DIR } from "./paths.js";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".woff2": "font/woff2",
};

/** A strict CSP: the page loads only its own scripts and styles and talks only to this origin's admin API. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

interface Asset {
  readonly type: string;
  readonly body: Buffer;
}

/** Every built file under its URL path below /portal/; read once at start, so no request touches the disk. */
function loadAssets(dir: string, prefix = ""): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(dir)) return assets;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${prefix}${entry.name}`;
    if (entry.isDirectory()) {
      for (const [k, v] of loadAssets(join(dir, entry.name), `${path}/`)) assets.set(k, v);
    } else if (TYPES[extname(entry.name)] !== undefined) {
      assets.set(path, { type: TYPES[extname(entry.name)] ?? "", body: readFileSync(join(dir, entry.name)) });
    }
  }
  return assets;
}

const NOT_BUILT = Buffer.from(
  "<!doctype html><title>Roster admin portal</title><p>The portal is not built: run <code>npm install</code> " +
    "(or <code>node --import tsx src/portal/build.ts</code>) and restart Roster.</p>",
);

/**
 * The admin portal (docs/portal.md): static assets built by Vite, served under /portal/. Any path below /portal/
 * without a file extension is a client-side route and gets index.html, so reloads and deep links work. The page
 * holds no data of its own; the admin token lives in the tab's sessionStorage.
 */
export function registerPortal(app: FastifyInstance, dir: string = DIST_DIR): void {
  const assets = loadAssets(dir);
  const index = assets.get("index.html") ?? { type: TYPES[".html"] ?? "", body: NOT_BUILT };

  const send = (reply: FastifyReply, asset: Asset, immutable: boolean) =>
    reply
      .type(asset.type)
      .header("content-security-policy", CSP)
      .header("x-content-type-options", "nosniff")
      .header("referrer-policy", "no-referrer")
      .header("x-frame-options", "DENY")
      // Vite names built assets by their content hash: they never change under one name.
      .header("cache-control", immutable ? "public, max-age=31536000, immutable" : "no-cache")
      .send(asset.body);

  // The router ignores trailing slashes, so `/portal` and `/portal/` reach one handler: tell them apart by the URL.
  app.get("/portal", async (req, reply) => {
    const [path, query] = splitUrl(req.url);
    if (!path.endsWith("/")) return reply.redirect(`${path}/${query}`, 301);
    return send(reply, index, false);
  });

  app.get<{ Params: { "*": string } }>("/portal/*", async (req, reply) => {
    const file = req.params["*"];
    const asset = assets.get(file);
    if (asset !== undefined && file !== "index.html") return send(reply, asset, file.startsWith("assets/"));
    // A path with an extension names a file, and a missing file is a 404, not the page.
    if (extname(file) !== "" || file.split("/").some((s) => s.startsWith(".")))
      return reply.code(404).type("text/plain").send("not found");
    return send(reply, index, false);
  });
}

function splitUrl(url: string): [string, string] {
  const i = url.indexOf("?");
  return i === -1 ? [url, ""] : [url.slice(0, i), url.slice(i)];
}
