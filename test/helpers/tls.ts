import { execFile } from "node:child_process";
import { readFile, rename } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface SelfSigned {
  readonly certFile: string;
  readonly keyFile: string;
  readonly cert: string;
}

/**
 * A self-signed certificate for 127.0.0.1 and localhost made by the `openssl` CLI, written as `<name>.crt` and
 * `<name>.key` in `dir`, then moved over `into` (the files a server reads) when given: a rename, so that a reader
 * never sees half a file.
 */
export async function selfSigned(
  dir: string,
  name: string,
  into?: { certFile: string; keyFile: string },
): Promise<SelfSigned> {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "1",
    "-subj",
    `/CN=${name}`,
    "-addext",
    "subjectAltName=IP:127.0.0.1,DNS:localhost",
    "-keyout",
    keyFile,
    "-out",
    certFile,
  ]);
  const cert = await readFile(certFile, "utf8");
  if (into === undefined) return { certFile, keyFile, cert };
  await rename(keyFile, into.keyFile);
  await rename(certFile, into.certFile);
  return { ...into, cert };
}

export interface HttpsAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One HTTPS request trusting only `ca`, from `localAddress` when given (another loopback address: another client). */
export function httpsCall(
  url: string,
  options: { ca: string; method?: string; headers?: Record<string, string>; body?: string; localAddress?: string },
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, {
      method: options.method ?? "GET",
      ca: options.ca,
      headers: options.headers ?? {},
      agent: false,
      timeout: 10_000,
      ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
    });
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("timeout", () => req.destroy(new Error(`no answer from ${url}`)));
    req.on("error", reject);
    req.end(options.body);
  });
}
