import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { seedClient } from "../helpers/seed.js";
import { useTestApp } from "../helpers/suite.js";

const run = promisify(execFile);
const SCRIPT = new URL("../interop/scim2_client_roundtrip.py", import.meta.url).pathname;

/** Whether python's scim2-client can be imported here (it comes from PyPI; machines without it skip the check). */
async function scim2ClientInstalled(): Promise<boolean> {
  try {
    await run("python3", ["-c", "import scim2_client, httpx"]);
    return true;
  } catch {
    return false;
  }
}

const installed = await scim2ClientInstalled();
const { t } = useTestApp({ listen: true });

describe.skipIf(!installed)("python's scim2-client", () => {
  it("discovers a connection without the pagination block and round-trips a user and a group", async () => {
    const c = await seedClient(t, { service_provider_config_pagination: false });
    const { stdout } = await run("python3", [SCRIPT, `${t.url}${c.base}`, c.secret], { timeout: 60_000 });
    expect(stdout).toContain("scim2-client round trip: ok");
  });
});
