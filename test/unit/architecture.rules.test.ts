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

/**
 * One source file: its line count, what it imports (`src/…` paths for local files, package names otherwise), and the
 * database handles and transactions it names (`scan`).
 */
interface SourceFile {
  lines: number;
  imports: string[];
  handles?: string[];
  /** Exported classes that extend Error (the domain's refusals, in a domain file). */
  errors?: string[];
  /** The names it imports (`import { A as B }` → A). */
  names?: string[];
  /** The classes its `instanceof` checks name. */
  instanceOf?: string[];
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

/**
 * Names that carry a database handle or a transaction across a file boundary: kysely's `Kysely`, `Transaction` and
 * `ControlledTransaction`, storage's `Db` alias, and a repository's own transaction alias (`GroupTransaction`).
 */
const HANDLE_NAME = /^(Db|Kysely|ControlledTransaction|[A-Za-z]*Transaction)$/;
/** Kysely's transaction starters: `db.transaction()` (no argument: a unit of work's `transaction(work)` is fine). */
const TRANSACTION_STARTERS = new Set(["transaction", "startTransaction"]);

/**
 * What the rules read of a file's syntax. The database handles and transactions it names (the Db rule): an imported or re-exported binding (`import type { Db }`,
 * `import("…").Db`) whose name is a handle, and every call that starts a Kysely transaction (`.transaction()`).
 */
function scan(file: string, text: string): Required<Omit<SourceFile, "lines" | "imports">> {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = new Set<string>();
  const errors = new Set<string>();
  const names = new Set<string>();
  const instanceOf = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isImportSpecifier(node) || ts.isExportSpecifier(node)) {
      const name = (node.propertyName ?? node.name).text;
      const fromModule = ts.isImportSpecifier(node) || node.parent.parent.moduleSpecifier !== undefined;
      if (fromModule && HANDLE_NAME.test(name)) found.add(name);
      if (ts.isImportSpecifier(node)) names.add(name);
    } else if (ts.isClassDeclaration(node) && node.name !== undefined && extendsError(node)) {
      if (node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) errors.add(node.name.text);
    } else if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.InstanceOfKeyword &&
      ts.isIdentifier(node.right)
    ) {
      instanceOf.add(node.right.text);
    } else if (ts.isImportTypeNode(node) && node.qualifier !== undefined) {
      const name = ts.isIdentifier(node.qualifier) ? node.qualifier.text : node.qualifier.right.text;
      if (HANDLE_NAME.test(name)) found.add(name);
    } else if (
      ts.isCallExpression(node) &&
      node.arguments.length === 0 &&
      ts.isPropertyAccessExpression(node.expression) &&
      TRANSACTION_STARTERS.has(node.expression.name.text)
    ) {
      found.add(`.${node.expression.name.text}()`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  const sorted = (set: Set<string>) => [...set].sort();
  return { handles: sorted(found), errors: sorted(errors), names: sorted(names), instanceOf: sorted(instanceOf) };
}

const extendsError = (node: ts.ClassDeclaration): boolean =>
  node.heritageClauses?.some((h) => h.types.some((t) => t.expression.getText() === "Error")) ?? false;

/**
 * The Db rule: only storage and repositories hold a database handle or a transaction. Composition roots hand a
 * handle to repositories: the root part, and a part's assembly file (`src/<part>/index.ts`), which names `Db` but
 * never starts a transaction.
 */
function handleViolations(file: string, handles: readonly string[]): string[] {
  if (isRepository(file) || partOf(file) === "root") return [];
  const assembly = /^src\/[^/]+\/index\.ts$/.test(file);
  return handles
    .filter((h) => !(assembly && !h.startsWith(".")))
    .map((h) => `db-only-in-storage-and-repositories: ${file} -> ${h}`);
}

/**
 * The one place each protocol maps the domain's errors (docs/architecture.md "Errors"), and which parts' errors each
 * must map: SCIM cannot import `apikeys/`, so it maps those of `directory/` and `events/`.
 */
const ERROR_MAPS: readonly { file: string; protocol: Part; from: readonly Part[] }[] = [
  { file: "src/scim/errors.ts", protocol: "scim", from: ["directory", "events"] },
  { file: "src/admin/domain-errors.ts", protocol: "admin", from: ["directory", "apikeys", "events"] },
];
/** Errors the domain throws and catches itself (a retry signal): no protocol ever sees them. */
const INTERNAL_SIGNALS: readonly string[] = ["NestingLockBusy"];

/**
 * Errors declared once, mapped once per protocol: every error class the domain exports is imported by each
 * protocol's map, and no other file of that protocol tests for it with `instanceof` (a route that catches a domain
 * error to translate it is a second mapping).
 */
function errorMappingViolations(graph: ImportGraph): string[] {
  const out: string[] = [];
  const declared = domainErrors(graph);
  for (const map of ERROR_MAPS) {
    const mapped = graph.get(map.file)?.names ?? [];
    for (const [name, part] of declared) {
      if (map.from.includes(part) && !mapped.includes(name)) out.push(`errors-mapped-once: ${map.file} misses ${name}`);
    }
    for (const [file, source] of graph) {
      if (file === map.file || partOf(file) !== map.protocol) continue;
      for (const name of source.instanceOf ?? []) {
        if (declared.has(name)) out.push(`errors-mapped-once: ${file} -> instanceof ${name}`);
      }
    }
  }
  return out;
}

/** The error classes the domain exports (internal signals aside) → the part that declares each. */
function domainErrors(graph: ImportGraph): Map<string, Part> {
  const declared = new Map<string, Part>();
  for (const [file, source] of graph) {
    const part = partOf(file);
    if (part === undefined || !DOMAIN.includes(part)) continue;
    for (const name of source.errors ?? []) if (!INTERNAL_SIGNALS.includes(name)) declared.set(name, part);
  }
  return declared;
}

/** Where the migrations live: only what runs migrate() may load them. */
const isMigration = (file: string): boolean => file.startsWith("src/storage/migrations/");

/**
 * A repository's import closure holds no migration: loading a repository (in a service, a test, a tool) never loads
 * every migration of the schema. Reported once per repository, with the first migration file its imports reach.
 */
function migrationsReached(graph: ImportGraph): string[] {
  const out: string[] = [];
  for (const file of graph.keys()) {
    if (!isRepository(file) || file.startsWith("src/storage/")) continue;
    const seen = new Set([file]);
    const queue = [file];
    let reached: string | undefined;
    while (reached === undefined && queue.length > 0) {
      for (const target of graph.get(queue.shift() ?? "")?.imports ?? []) {
        if (!graph.has(target) || seen.has(target)) continue;
        if (isMigration(target)) {
          reached = target;
          break;
        }
        seen.add(target);
        queue.push(target);
      }
    }
    if (reached !== undefined) out.push(`repositories-load-no-migration: ${file} -> ${reached}`);
  }
  return out;
}

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
    for (const broken of handleViolations(file, source.handles ?? [])) {
      if (!allow.imports.includes(broken)) out.push(broken);
    }
  }
  for (const loop of cycles(graph)) {
    const entry = `no-import-cycles: ${loop.join(" <-> ")}`;
    if (!allow.imports.includes(entry)) out.push(entry);
  }
  for (const entry of migrationsReached(graph)) if (!allow.imports.includes(entry)) out.push(entry);
  for (const entry of errorMappingViolations(graph)) if (!allow.imports.includes(entry)) out.push(entry);
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
    ...scan(file, text),
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

  it("finds the domain's error classes, so the error-mapping rule has something to check", () => {
    const declared = domainErrors(graph);
    for (const name of ["ApiKeyError", "ClientGoneError", "GroupError", "UnsupportedFilterError"]) {
      expect(declared.has(name)).toBe(true);
    }
    expect(declared.has("NestingLockBusy")).toBe(false);
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

  /** The clean graph with one more file read from `text` (its imports and the handles it names). */
  const withText = (path: string, text: string): ImportGraph => {
    const graph = clean();
    graph.set(path, parse(path, text));
    return graph;
  };
  const DB_IMPORT = 'import type { Db } from "../storage/database.js";\n';

  it.each([
    ["a service names Db", "src/events/feed.ts", DB_IMPORT, "Db"],
    [
      "a service takes a repository's transaction alias",
      "src/apikeys/service.ts",
      'import type { GroupTransaction } from "../directory/groups/repo.js";\n',
      "GroupTransaction",
    ],
    [
      "a service names Db through an import type",
      "src/events/feed.ts",
      'export const f = (db: import("../storage/database.js").Db) => db;\n',
      "Db",
    ],
    ["a service re-exports Db", "src/events/feed.ts", 'export type { Db } from "../storage/database.js";\n', "Db"],
    [
      "a service starts a Kysely transaction",
      "src/events/feed.ts",
      "export const f = (db: { transaction(): unknown }) => db.transaction();\n",
      ".transaction()",
    ],
    [
      "a part's assembly file starts a transaction",
      "src/webhooks/index.ts",
      "export const f = (db: { startTransaction(): unknown }) => db.startTransaction();\n",
      ".startTransaction()",
    ],
  ])("the Db rule: %s", (_name, path, text, handle) => {
    const entry = `db-only-in-storage-and-repositories: ${path} -> ${handle}`;
    expect(violations(withText(path, text), none)).toEqual([entry]);
    expect(violations(withText(path, text), { imports: [entry], lines: {} })).toEqual([]);
  });

  it.each([
    ["a repository", "src/events/repo.ts", `${DB_IMPORT}export const f = (db: Db) => db.transaction();\n`],
    ["storage", "src/storage/open.ts", 'import type { Db } from "./database.js";\n'],
    ["the composition root", "src/app.ts", DB_IMPORT.replace("../", "./")],
    ["a part's assembly file handing Db to repositories", "src/webhooks/index.ts", DB_IMPORT],
  ])("the Db rule accepts %s", (_name, path, text) => {
    expect(parse(path, text).handles?.length).toBeGreaterThan(0);
    expect(violations(withText(path, text), none)).toEqual([]);
  });

  it("the Db rule does not count a unit of work's transaction(work) as Kysely's builder", () => {
    const text = "export const f = (repo: { transaction(w: () => void): void }) => repo.transaction(() => {});\n";
    expect(parse("src/apikeys/service.ts", text).handles).toEqual([]);
    expect(violations(withText("src/apikeys/service.ts", text), none)).toEqual([]);
  });

  describe("errors declared once, mapped once per protocol", () => {
    const maps = (): ImportGraph => {
      const graph = clean();
      graph.set(
        "src/directory/groups/errors.ts",
        parse("src/directory/groups/errors.ts", "export class GroupError extends Error {}\n"),
      );
      graph.set(
        "src/apikeys/errors.ts",
        parse("src/apikeys/errors.ts", "export class ApiKeyError extends Error {}\nclass Local extends Error {}\n"),
      );
      graph.set(
        "src/scim/errors.ts",
        parse("src/scim/errors.ts", 'import { GroupError } from "../directory/groups/errors.js";\n'),
      );
      const admin =
        'import { ApiKeyError } from "../apikeys/errors.js";\nimport { GroupError } from "../directory/groups/errors.js";\n';
      graph.set("src/admin/domain-errors.ts", parse("src/admin/domain-errors.ts", admin));
      return graph;
    };

    it("accepts every domain error imported by each protocol's map (SCIM needs none of apikeys/)", () => {
      expect(violations(maps(), none)).toEqual([]);
    });

    it("a new domain error that a protocol's map misses", () => {
      const graph = maps();
      const text = "export class GroupError extends Error {}\nexport class GroupGone extends Error {}\n";
      graph.set("src/directory/groups/errors.ts", parse("src/directory/groups/errors.ts", text));
      expect(violations(graph, none)).toEqual([
        "errors-mapped-once: src/admin/domain-errors.ts misses GroupGone",
        "errors-mapped-once: src/scim/errors.ts misses GroupGone",
      ]);
    });

    it("a route that catches a domain error to translate it", () => {
      const graph = maps();
      const route =
        'import { GroupError } from "../../directory/groups/errors.js";\n' +
        "export const f = (e: unknown) => e instanceof GroupError;\n";
      graph.set("src/admin/routes/groups.ts", parse("src/admin/routes/groups.ts", route));
      expect(violations(graph, none)).toEqual([
        "errors-mapped-once: src/admin/routes/groups.ts -> instanceof GroupError",
      ]);
    });

    it("an internal signal of the domain is no protocol's business", () => {
      const graph = maps();
      const text = "export class NestingLockBusy extends Error {}\n";
      graph.set("src/directory/groups/memberships.ts", parse("src/directory/groups/memberships.ts", text));
      expect(violations(graph, none)).toEqual([]);
    });
  });

  it("a repository whose imports reach a migration", () => {
    const graph = withImport("src/storage/database.ts", "src/storage/migrate.ts");
    graph.set("src/storage/migrate.ts", file(["kysely", "src/storage/migrations/index.ts"]));
    graph.set("src/storage/migrations/index.ts", file(["src/storage/migrations/0001-foundation.ts"]));
    graph.set("src/storage/migrations/0001-foundation.ts", file(["kysely"]));
    const reached = (repo: string) => `repositories-load-no-migration: ${repo} -> src/storage/migrations/index.ts`;
    const expected = [
      reached("src/directory/groups/repo.ts"),
      reached("src/directory/identities/repo/reads.ts"),
      reached("src/webhooks/outbox-repo.ts"),
    ];
    expect(violations(graph, none)).toEqual(expected);
    expect(violations(graph, { imports: expected, lines: {} })).toEqual([]);
    // migrate() apart from the database handle: only what runs it loads the migrations.
    const apart = withImport("src/app.ts", "src/storage/migrate.ts");
    apart.set("src/storage/migrate.ts", file(["kysely", "src/storage/migrations/index.ts"]));
    apart.set("src/storage/migrations/index.ts", file(["kysely"]));
    expect(violations(apart, none)).toEqual([]);
  });
});
