import { readFileSync } from "node:fs";

/** A real IdP request body from test/fixtures/idp/ (a fresh copy each call). */
export const idpBody = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../fixtures/idp/${name}.json`, import.meta.url), "utf8")) as Record<string, unknown>;

/** The PatchOp body of a fixture with each operation passed through `edit`. */
export function patchBody(name: string, edit: (op: Record<string, unknown>) => Record<string, unknown> = (o) => o) {
  const body = idpBody(name);
  const ops = body.Operations as Record<string, unknown>[];
  return { ...body, Operations: ops.map(edit) };
}
