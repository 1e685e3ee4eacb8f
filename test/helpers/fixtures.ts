import { readFileSync } from "node:fs";

/** A real IdP request body from test/fixtures/idp/ (a fresh copy each call). */
export const idpBody = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../fixtures/idp/${name}.json`, import.meta.url), "utf8")) as Record<string, unknown>;
