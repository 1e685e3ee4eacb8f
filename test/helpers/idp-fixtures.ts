import { readFileSync } from "node:fs";

/**
 * A real IdP request body from test/fixtures/idp/, with `{{name}}` placeholders filled in (ids are only known at run
 * time) and the fixture's `_source` note removed.
 */
export function idpBody(name: string, values: Record<string, string> = {}): Record<string, unknown> {
  const text = readFileSync(new URL(`../fixtures/idp/${name}.json`, import.meta.url), "utf8");
  const filled = text.replace(/\{\{(\w+)\}\}/g, (_m, key: string) => {
    const value = values[key];
    if (value === undefined) throw new Error(`fixture ${name} needs a value for {{${key}}}`);
    return value;
  });
  const { _source: _dropped, ...body } = JSON.parse(filled) as Record<string, unknown>;
  return body;
}
