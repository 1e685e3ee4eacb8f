import { cpSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { build } from "esbuild";

const ROOT = join(import.meta.dirname, "../..");
const SRC = join(ROOT, "src");
/** Not the server's: the portal's sources (built into dist/ by Vite) and that build. */
const NOT_SERVER = [join(SRC, "portal/web"), join(SRC, "portal/dist")];

function filesUnder(dir: string): string[] {
  if (NOT_SERVER.includes(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}

/**
 * `src/` compiled to JavaScript under `dir`, file by file as tsx compiles it when `npm start` runs (esbuild, no
 * bundling), with the same layout, so that every path a module finds from its own URL (the portal's build, the
 * mapping worker) is where it is in `src/`; packages resolve through a link to the checkout's node_modules.
 * Answers the server's entry point, `dir/src/server.js`.
 *
 * Roster child processes of the tests run it with plain node: under tsx each of the ~1 500 modules of a start goes
 * through tsx's loader hooks, and a start took twice the CPU (4.3–4.7 s against 2.0–2.5 s on the 2-core development
 * machine). The tests start about thirty, two files at a time on two cores.
 */
export async function buildServer(dir: string): Promise<string> {
  const files = filesUnder(SRC);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await build({
    entryPoints: files.filter((f) => f.endsWith(".ts")),
    outdir: join(dir, "src"),
    outbase: SRC,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "error",
  });
  for (const file of files.filter((f) => !f.endsWith(".ts"))) cpSync(file, join(dir, "src", relative(SRC, file)));
  symlinkSync(join(SRC, "portal/dist"), join(dir, "src/portal/dist"), "dir");
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  return join(dir, "src/server.js");
}
