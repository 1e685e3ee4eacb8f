import type { FastifyInstance, FastifyReply } from "fastify";
import type { SetupLinkService } from "../../directory/setup-links/service.js";
import { SETUP_COOKIE, type SetupSessionCodec } from "./session.js";

export interface ExchangeDeps {
  readonly setupLinks: SetupLinkService;
  readonly sessions: SetupSessionCodec;
  readonly publicUrl: () => string;
}

const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

/**
 * `GET /portal/setup/<token>`: a setup link's first (or any later) opening. A live link's token is exchanged for a
 * session cookie (HttpOnly, SameSite=Strict, Secure under HTTPS) and the browser is sent on to `/portal/setup`, so the
 * token leaves the address bar and the history; an expired or revoked link answers 410 with a page that says whom to
 * ask. The token never reaches a log line: the route logs no URL of its own.
 */
export function registerSetupExchange(app: FastifyInstance, deps: ExchangeDeps): void {
  app.get<{ Params: { token: string } }>("/portal/setup/:token", async (req, reply) => {
    reply.header("cache-control", "no-store").header("referrer-policy", "no-referrer");
    const opened = await deps.setupLinks.open(req.params.token);
    if (!opened.ok) return gone(reply, opened.reason);
    const session = deps.sessions.issue(opened.link.id, opened.link.expireTime);
    const secure = req.protocol === "https" || deps.publicUrl().startsWith("https:");
    reply.setCookie(SETUP_COOKIE, session.value, {
      httpOnly: true,
      sameSite: "strict",
      secure,
      path: "/",
      maxAge: session.maxAgeSeconds,
    });
    return reply.code(303).header("location", "/portal/setup").send();
  });
}

function gone(reply: FastifyReply, reason: "unknown" | "expired" | "revoked") {
  const what =
    reason === "expired" ? "has expired" : reason === "revoked" ? "was revoked" : "is not valid (it may be mistyped)";
  const html = `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Setup link ${what}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1b1f24}</style>
<main><h1>This setup link ${what}</h1>
<p>Setup links work for a limited time. Ask the person who sent you this link — the team of the application you are
connecting — for a new one.</p></main></html>`;
  return reply.code(410).type("text/html; charset=utf-8").header("content-security-policy", PAGE_CSP).send(html);
}
