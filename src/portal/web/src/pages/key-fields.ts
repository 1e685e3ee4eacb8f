import type { RateLimit } from "../api.js";

/** `per_minute 100 60s`, one limit a line → rate_limits; a line that does not parse is named in the error. */
export function parseRateLimits(text: string): RateLimit[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .map((line, i) => {
      const m = /^(\S+)\s+(\d+)\s+(\d+s?)$/.exec(line);
      if (m === null)
        throw new Error(`rate limit line ${i + 1} must read “name limit period”, e.g. “per_minute 100 60s”`);
      const period = m[3] ?? "";
      return { name: m[1] ?? "default", limit: Number(m[2]), period: period.endsWith("s") ? period : `${period}s` };
    });
}

export const formatRateLimits = (limits: readonly RateLimit[]): string =>
  limits.map((l) => `${l.name} ${l.limit} ${l.period}`).join("\n");

export const parseScopes = (text: string): string[] =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s !== "");

export function parseMetadata(text: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('metadata must be a JSON object, e.g. {"team": "billing"}');
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new Error("metadata must be a JSON object");
  return value as Record<string, unknown>;
}

export interface ImportItem {
  raw_key: string;
  name: string;
  actor_id: string;
  scopes?: string[];
}

/**
 * A pasted list: either CSV with a header naming raw_key, name, actor_id (and optionally scopes, space-separated),
 * or one raw key a line, named and owned by the defaults given.
 */
export function parseImport(text: string, defaults: { name: string; actor: string }): ImportItem[] {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "");
  const header = lines[0]?.split(",").map((h) => h.trim().toLowerCase()) ?? [];
  if (header.includes("raw_key")) {
    const col = (name: string) => header.indexOf(name);
    return lines.slice(1).map((line) => {
      const cells = splitCsv(line);
      const cell = (name: string) => (col(name) === -1 ? "" : (cells[col(name)] ?? "").trim());
      const scopes = cell("scopes");
      return {
        raw_key: cell("raw_key"),
        name: cell("name") || defaults.name,
        actor_id: cell("actor_id") || defaults.actor,
        ...(scopes === "" ? {} : { scopes: parseScopes(scopes) }),
      };
    });
  }
  return lines.map((raw_key) => ({ raw_key, name: defaults.name, actor_id: defaults.actor }));
}

/** One CSV line with double-quoted cells ("" is a quote inside one). */
function splitCsv(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      cells.push(cell);
      cell = "";
    } else cell += ch;
  }
  cells.push(cell);
  return cells;
}
