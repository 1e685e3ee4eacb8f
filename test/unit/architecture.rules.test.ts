import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The import rules of docs/architecture.md, checked over the import graph of `src/`. The graph is read with the
 * TypeScript compiler's pre-processor (every `import`, `export … from`, `import()` and `import type`), so no
 * dependency beyond the compiler the project already uses is needed.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const MAX_LINES = 300;

/** One source file: its line count and what it imports (`src/…` paths for local files, package names otherwise). */
interface SourceFile {
  lines: number;
  imports: string[];
}
type ImportGraph = Map<string, SourceFile>;

type Part =
  | "root"
  | "config"
  | "platform"
  | "storage"
  | "events"
  | "directory"
  | "apikeys"
  | "webhooks"
  | "observability"
  | "scim"
  | "admin"
  | "portal";

const DOMAIN: readonly Part[] = ["directory", "apikeys", "events"];
const PROTOCOLS: readonly Part[] = ["scim", "admin", "portal"];

/** The allowed arrows between parts (a part may always import itself); the composition root may import anything. */
const ALLOWED: Record<Exclude<Part, "root">, readonly Part[]> = {
  platform: [],
  // Configuration takes the defaults and validators of what it configures (mapping sources, database timeouts).
  config: ["directory", "storage", "platform"],
  storage: ["platform", "config"],
  events: ["storage", "platform", "config"],
  directory: ["events", "storage", "platform", "config"],
  apikeys: ["directory", "storage", "platform", "config"],
  webhooks: ["events", "storage", "platform", "config"],
  observability: ["directory", "webhooks", "storage", "platform", "config"],
  scim: ["directory", "observability", "platform", "config"],
  // The admin API reuses the SCIM protocol's parsers: the directory browser searches with SCIM filters and
  // :testMapping validates a SCIM user exactly as a SCIM write would.
  admin: ["directory", "apikeys", "events", "webhooks", "observability", "scim", "platform", "config"],
  portal: ["directory", "platform", "config"],
};

function partOf(file: string): Part | undefined {
  if (file === "src/app.ts" || file === "src/server.ts" || file === "src/edge-errors.ts") return "root";
  if (file === "src/config.ts") return "config";
  const dir = /^src\/([^/]+)\//.exec(file)?.[1];
  return dir !== undefined && dir in ALLOWED ? (dir as Part) : undefined;
}

const isLocal = (target: string): boolean => target.startsWith("src/");
const isSqlPackage = (target: string): boolean => target === "kysely" || target === "pg" || target.startsWith("pg-");
const isHttpFramework = (target: string): boolean => target === "fastify" || target.startsWith("@fastify/");
/**
 * Repositories own SQL: `repo.ts`, `*-repo.ts`, `repo-*.ts`, files of a `repo/` folder, and everything under `src/storage/`. The
 * tracer also loads the `pg` driver, to instrument it before any pool opens; it passes no SQL type anywhere.
 */
const isRepository = (file: string): boolean =>
  file.startsWith("src/storage/") ||
  /(^|\/|-)repo(-[a-z-]+)?\.tsx?$/.test(file) ||
  /\/repo\//.test(file) ||
  file === "src/observability/tracing.ts";

/** Every rule broken by one import, as `rule: file -> target` (one rule per import: the most specific one). */
function importViolation(file: string, target: string): string | undefined {
  const from = partOf(file);
  if (from === undefined) return undefined;
  const to = isLocal(target) ? partOf(target) : undefined;
  if (DOMAIN.includes(from) && (isHttpFramework(target) || (to !== undefined && PROTOCOLS.includes(to)))) {
    return `domain-knows-no-protocol: ${file} -> ${target}`;
  }
  if (isSqlPackage(target) && !isRepository(file)) return `sql-only-in-repositories: ${file} -> ${target}`;
  if (from === "scim" && to === "storage") return `scim-never-imports-storage: ${file} -> ${target}`;
  // A repository is its feature's storage adapter: it may use storage/ whatever part it belongs to.
  if (to === "storage" && isRepository(file) && from !== "scim") return undefined;
  if (from !== "root" && to !== undefined && to !== from && !ALLOWED[from].includes(to)) {
    return `allowed-arrows: ${file} -> ${target}`;
  }
  return undefined;
}

/** Files that import each other in a loop (Tarjan's strongly connected components of more than one file). */
function cycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.imports ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** Known violations, accepted until the lead empties this list: each import entry is `rule: file -> target`. */
interface Allowlist {
  imports: readonly string[];
  /** Files over the limit today → their line count today: they may shrink, never grow. */
  lines: Readonly<Record<string, number>>;
}

/** Every violation of the graph not covered by the allowlist. */
function violations(graph: ImportGraph, allow: Allowlist): string[] {
  const out: string[] = [];
  for (const [file, source] of graph) {
    for (const target of new Set(source.imports)) {
      const broken = importViolation(file, target);
      if (broken !== undefined && !allow.imports.includes(broken)) out.push(broken);
    }
    if (source.lines > MAX_LINES && source.lines > (allow.lines[file] ?? MAX_LINES)) {
      out.push(`at-most-${MAX_LINES}-lines: ${file} has ${source.lines}`);
    }
  }
  for (const loop of cycles(graph)) {
    const entry = `no-import-cycles: ${loop.join(" <-> ")}`;
    if (!allow.imports.includes(entry)) out.push(entry);
  }
  return out.sort();
}

/** Allowlist entries that no longer match anything: a fixed violation, ready to be removed from the list. */
function stale(graph: ImportGraph, allow: Allowlist): string[] {
  const everything = violations(graph, { imports: [], lines: {} });
  const importsLeft = allow.imports.filter((entry) => !everything.includes(entry));
  const linesLeft = Object.keys(allow.lines).filter((file) => (graph.get(file)?.lines ?? 0) <= MAX_LINES);
  return [...importsLeft, ...linesLeft];
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules" && entry.name !== "dist") out.push(...sourceFiles(path));
    } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) {
      out.push(path);
    }
  }
  return out;
}

/** `./x.js` from `src/a/b.ts` → `src/a/x.ts` (or `.tsx`, or `x/index.ts`); a bare specifier → its package name. */
function resolve(from: string, specifier: string): string | undefined {
  if (specifier.startsWith("node:")) return undefined;
  if (!specifier.startsWith(".")) {
    const parts = specifier.split("/");
    return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
  }
  const base = posix.normalize(posix.join(posix.dirname(from), specifier)).replace(/\.(js|jsx|ts|tsx)$/, "");
  const candidates = [`${base}.ts`, `${base}.tsx`, `${base}/index.ts`, base];
  return candidates.find((c) => existsSync(join(ROOT, c))) ?? `${base}.ts`;
}

/** One file's lines and imports, type-only imports included: a loop of types is still a loop. */
function parse(file: string, text: string): SourceFile {
  const imported = ts.preProcessFile(text, true, true).importedFiles.map((f) => resolve(file, f.fileName));
  return {
    lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0),
    imports: imported.filter((t): t is string => t !== undefined),
  };
}

function readGraph(): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of sourceFiles("src")) graph.set(file, parse(file, readFileSync(join(ROOT, file), "utf8")));
  return graph;
}

/** Known violations: none. A new one fails the test below; fix the import rather than list it here. */
const KNOWN: Allowlist = { imports: [], lines: {} };

describe("architecture rules over the import graph of src/", () => {
  const graph = readGraph();

  it("reads the whole tree", () => {
    expect(graph.has("src/app.ts")).toBe(true);
    expect(graph.get("src/app.ts")?.imports).toContain("fastify");
    expect([...graph.keys()].every((file) => partOf(file) !== undefined)).toBe(true);
  });

  it("no import breaks a rule beyond the known violations, and no file outgrows its limit", () => {
    expect(violations(graph, KNOWN)).toEqual([]);
  });

  it("lists fixed violations so the allowlist can shrink", () => {
    const fixed = stale(graph, KNOWN);
    if (fixed.length > 0) console.info(`architecture allowlist entries already fixed:\n  ${fixed.join("\n  ")}`);
    expect(Array.isArray(fixed)).toBe(true);
  });
});

describe("the check fails for a new violation (synthetic graph)", () => {
  const file = (imports: string[], lines = 10): SourceFile => ({ lines, imports });
  const none: Allowlist = { imports: [], lines: {} };
  const clean = (): ImportGraph =>
    new Map([
      ["src/app.ts", file(["fastify", "src/scim/plugin.ts", "src/directory/groups/service.ts"])],
      ["src/scim/plugin.ts", file(["fastify", "src/directory/groups/service.ts", "src/platform/clock.ts"])],
      ["src/directory/groups/service.ts", file(["src/directory/groups/repo.ts", "src/platform/clock.ts"])],
      ["src/directory/groups/repo.ts", file(["kysely", "src/storage/database.ts"])],
      ["src/directory/identities/repo/reads.ts", file(["kysely", "src/storage/database.ts"])],
      ["src/webhooks/outbox-repo.ts", file(["kysely", "src/storage/database.ts"])],
      ["src/storage/database.ts", file(["kysely", "pg", "src/platform/clock.ts"])],
      ["src/platform/clock.ts", file([])],
    ]);
  const withImport = (from: string, target: string): ImportGraph => {
    const graph = clean();
    const source = graph.get(from) ?? file([]);
    graph.set(from, { ...source, imports: [...source.imports, target] });
    return graph;
  };

  it("accepts the clean graph", () => {
    expect(violations(clean(), none)).toEqual([]);
  });

  it.each([
    [
      "the domain imports a protocol",
      "src/directory/groups/service.ts",
      "src/admin/errors.ts",
      "domain-knows-no-protocol",
    ],
    ["the domain imports fastify", "src/directory/groups/service.ts", "fastify", "domain-knows-no-protocol"],
    [
      "the domain imports a fastify plugin",
      "src/directory/groups/service.ts",
      "@fastify/swagger",
      "domain-knows-no-protocol",
    ],
    ["a service imports kysely", "src/directory/groups/service.ts", "kysely", "sql-only-in-repositories"],
    ["a protocol imports pg", "src/scim/plugin.ts", "pg", "sql-only-in-repositories"],
    [
      "a repository's helper outside the repository imports kysely",
      "src/directory/groups/sql.ts",
      "kysely",
      "sql-only-in-repositories",
    ],
    ["scim imports storage", "src/scim/plugin.ts", "src/storage/database.ts", "scim-never-imports-storage"],
    ["storage imports the domain", "src/storage/database.ts", "src/directory/groups/types.ts", "allowed-arrows"],
    ["platform imports storage", "src/platform/clock.ts", "src/storage/errors.ts", "allowed-arrows"],
    ["a protocol imports another", "src/scim/plugin.ts", "src/admin/errors.ts", "allowed-arrows"],
    ["delivery imports the domain", "src/webhooks/outbox-repo.ts", "src/directory/groups/types.ts", "allowed-arrows"],
    [
      "a service outside a repository imports storage",
      "src/admin/tokens/service.ts",
      "src/storage/database.ts",
      "allowed-arrows",
    ],
  ])("%s", (_name, from, target, rule) => {
    const found = violations(withImport(from, target), none);
    expect(found).toEqual([`${rule}: ${from} -> ${target}`]);
    expect(violations(withImport(from, target), { imports: found, lines: {} })).toEqual([]);
  });

  it("an import cycle", () => {
    const graph = withImport("src/directory/groups/repo.ts", "src/directory/groups/service.ts");
    const loop = "no-import-cycles: src/directory/groups/repo.ts <-> src/directory/groups/service.ts";
    expect(violations(graph, none)).toEqual([loop]);
    expect(violations(graph, { imports: [loop], lines: {} })).toEqual([]);
  });

  it("a type-only import that closes a loop counts too", () => {
    const graph = clean();
    graph.set("src/platform/clock.ts", parse("src/platform/clock.ts", 'import type { Id } from "./ids.js";\n'));
    graph.set("src/platform/ids.ts", parse("src/platform/ids.ts", 'export { now } from "./clock.js";\n'));
    expect(violations(graph, none)).toEqual(["no-import-cycles: src/platform/clock.ts <-> src/platform/ids.ts"]);
  });

  it("a file over 300 lines, and an allowlisted one that grows", () => {
    const graph = clean();
    graph.set("src/platform/clock.ts", file([], 301));
    expect(violations(graph, none)).toEqual(["at-most-300-lines: src/platform/clock.ts has 301"]);
    expect(violations(graph, { imports: [], lines: { "src/platform/clock.ts": 301 } })).toEqual([]);
    graph.set("src/platform/clock.ts", file([], 302));
    expect(violations(graph, { imports: [], lines: { "src/platform/clock.ts": 301 } })).toEqual([
      "at-most-300-lines: src/platform/clock.ts has 302",
    ]);
  });

  it("the composition root may import any part", () => {
    expect(violations(withImport("src/app.ts", "src/storage/database.ts"), none)).toEqual([]);
  });
});
