import { fileURLToPath } from "node:url";

/** Where the portal's sources live and where Vite writes the static assets Roster serves under /portal/. */
export const WEB_DIR = fileURLToPath(new URL("./web/", import.meta.url));
export const DIST_DIR = fileURLToPath(new URL("./dist/", import.meta.url));
