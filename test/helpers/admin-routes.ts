import type { HTTPMethods, RouteOptions } from "fastify";

export const ADMIN_PREFIX = "/v2alpha1/admin";

export interface AdminRoute {
  method: string;
  url: string;
  viewerAllowed: boolean;
}

/**
 * createTestApp's `extra` that records every admin route as Fastify registers it, one entry per method, in the
 * order Fastify saw them; `head: false` leaves out HEAD, Fastify's own twin of a GET.
 */
export function recordAdminRoutes(into: AdminRoute[], options: { head: boolean }) {
  return {
    onRoute: (route: RouteOptions) => {
      if (!route.url.startsWith(ADMIN_PREFIX)) return;
      const methods = (Array.isArray(route.method) ? route.method : [route.method]) as HTTPMethods[];
      for (const method of methods) {
        if (method === "HEAD" && !options.head) continue;
        into.push({ method, url: route.url, viewerAllowed: route.config?.viewerAllowed === true });
      }
    },
  };
}
