/**
 * Secrets the server (or this page) just generated, held in memory only until the admin leaves the connection:
 * never in a URL, sessionStorage or localStorage. A reload forgets them, which is what "shown once" means.
 */
const held = new Map<string, string>();

export const oneTime = {
  put: (key: string, secret: string) => held.set(key, secret),
  get: (key: string): string | undefined => held.get(key),
  drop: (key: string) => held.delete(key),
};
