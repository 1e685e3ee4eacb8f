import { constants } from "node:fs";
import { open, realpath } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { request } from "undici";
import { OutboundGuard, outboundRefusal } from "../../platform/outbound/guard.js";
import { MappingError } from "./errors.js";
import { type MappingSourcePolicy, UrlAllowList } from "./policy.js";

/** Bounds on fetching a mapping script from a URL or a file. */
export const MAPPING_FETCH_TIMEOUT_MS = 5_000;
export const MAX_MAPPING_BYTES = 256 * 1024;
/** Each hop of a redirect chain is checked like the first URL; longer chains are refused. */
export const MAX_MAPPING_REDIRECTS = 3;

const SCHEMES = ["https://", "http://", "file://", "base64://"] as const;

export const isMappingUrl = (source: string): boolean => {
  const lower = source.trim().toLowerCase();
  return SCHEMES.some((s) => lower.startsWith(s));
};

/** The text of a mapping, and whether it was read from a file or a URL (then no error may quote it). */
export interface MappingText {
  readonly text: string;
  readonly fetched: boolean;
}

const inside = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
};

/**
 * Reads mapping scripts under a MappingSourcePolicy (docs/decisions.md "Mapping sandbox"). Errors name the rule
 * that refused a source, never what a file or a server returned.
 */
export class MappingSources {
  readonly #dir: string | undefined;
  readonly #allow: UrlAllowList;
  readonly #guard: OutboundGuard;

  constructor(policy: MappingSourcePolicy) {
    this.#dir = policy.dir === undefined ? undefined : resolve(policy.dir);
    this.#allow = new UrlAllowList(policy.urlAllow);
    // The shared outbound guard (docs/security.md "Outbound requests") connects only to addresses it checked, so a
    // name cannot resolve to one address when checked and another when connected (DNS rebinding).
    this.#guard = new OutboundGuard({
      variable: "ROSTER_MAPPING_URL_ALLOW",
      allow: policy.urlAllow,
      hosts: "listed",
      connectTimeoutMs: MAPPING_FETCH_TIMEOUT_MS,
    });
  }

  /** Refuses, without reading anything, a source this policy would never read (checked when a mapping is stored). */
  check(source: string): void {
    const trimmed = source.trim();
    const lower = trimmed.toLowerCase();
    if (lower.startsWith("file://")) this.#filePath(trimmed);
    else if (lower.startsWith("http://") || lower.startsWith("https://")) this.#checkUrl(new URL(trimmed), "first");
  }

  /** The JSONata text of a mapping: the source itself, or what its URL (https, http, file, base64) points at. */
  async text(source: string): Promise<MappingText> {
    const trimmed = source.trim();
    const lower = trimmed.toLowerCase();
    if (lower.startsWith("base64://")) {
      return { text: bounded(Buffer.from(trimmed.slice("base64://".length), "base64")), fetched: false };
    }
    if (lower.startsWith("file://")) return { text: await this.#readFile(trimmed), fetched: true };
    if (lower.startsWith("http://") || lower.startsWith("https://")) {
      return { text: await this.#fetch(trimmed), fetched: true };
    }
    return { text: trimmed, fetched: false };
  }

  close(): Promise<void> {
    return this.#guard.close();
  }

  /** The file a `file://` URL names, if it lies below the directory by its path (symlinks are resolved later). */
  #filePath(url: string): { root: string; path: string } {
    if (this.#dir === undefined) throw new MappingError("file:// mappings are refused: ROSTER_MAPPING_DIR is not set");
    let path: string;
    try {
      path = resolve(fileURLToPath(url));
    } catch {
      throw new MappingError("the mapping file URL is not a local file:// URL");
    }
    if (!inside(this.#dir, path)) throw new MappingError("the mapping file is outside ROSTER_MAPPING_DIR");
    return { root: this.#dir, path };
  }

  async #readFile(url: string): Promise<string> {
    const { root, path } = this.#filePath(url);
    let real: string;
    let realRoot: string;
    try {
      [realRoot, real] = await Promise.all([realpath(root), realpath(path)]);
    } catch {
      throw new MappingError("the mapping script file could not be read");
    }
    // `..` and symlinks resolved: the file itself must lie below the directory itself.
    if (!inside(realRoot, real)) throw new MappingError("the mapping file is outside ROSTER_MAPPING_DIR");
    let handle: Awaited<ReturnType<typeof open>> | undefined;
    try {
      // No symlink swapped in after the check; a FIFO neither blocks the open nor is read.
      handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      if (!(await handle.stat()).isFile()) throw new MappingError("the mapping script is not a regular file");
      const buffer = Buffer.alloc(MAX_MAPPING_BYTES + 1);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      return bounded(buffer.subarray(0, bytesRead));
    } catch (e) {
      if (e instanceof MappingError) throw e;
      throw new MappingError("the mapping script file could not be read");
    } finally {
      await handle?.close();
    }
  }

  #checkUrl(url: URL, hop: "first" | "redirect"): void {
    const what = hop === "first" ? "the mapping URL" : "the mapping URL redirects to a URL that";
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new MappingError(`${what} is not http:// or https://`);
    }
    if (this.#allow.empty) {
      throw new MappingError("http(s):// mappings are refused: ROSTER_MAPPING_URL_ALLOW is not set");
    }
    if (!this.#allow.hostAllowed(url.hostname)) {
      throw new MappingError(
        hop === "first"
          ? "the mapping URL's host is not allowed by ROSTER_MAPPING_URL_ALLOW"
          : "the mapping URL redirects to a host not allowed by ROSTER_MAPPING_URL_ALLOW",
      );
    }
  }

  async #fetch(source: string): Promise<string> {
    const signal = AbortSignal.timeout(MAPPING_FETCH_TIMEOUT_MS);
    let url = new URL(source);
    for (let hop = 0; ; hop++) {
      this.#checkUrl(url, hop === 0 ? "first" : "redirect");
      let response: Awaited<ReturnType<typeof request>>;
      try {
        response = await request(url, { dispatcher: this.#guard.dispatcher, signal, method: "GET" });
      } catch (e) {
        if (outboundRefusal(e) !== undefined) {
          throw new MappingError(
            "the mapping URL resolves to a loopback, link-local or private address not allowed by ROSTER_MAPPING_URL_ALLOW",
          );
        }
        throw new MappingError(
          signal.aborted ? "fetching the mapping script timed out" : "the mapping script could not be fetched",
        );
      }
      const { statusCode, headers, body } = response;
      if (statusCode >= 300 && statusCode < 400 && headers.location !== undefined) {
        await body.dump();
        if (hop >= MAX_MAPPING_REDIRECTS) throw new MappingError("the mapping URL redirects too many times");
        try {
          url = new URL(String(headers.location), url);
        } catch {
          throw new MappingError("the mapping URL redirects to an invalid URL");
        }
        continue;
      }
      if (statusCode < 200 || statusCode >= 300) {
        await body.dump();
        throw new MappingError(`fetching the mapping script answered HTTP ${statusCode}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of body) {
          size += (chunk as Buffer).byteLength;
          if (size > MAX_MAPPING_BYTES) {
            body.destroy();
            throw new MappingError(`the mapping script exceeds ${MAX_MAPPING_BYTES} bytes`);
          }
          chunks.push(chunk as Buffer);
        }
      } catch (e) {
        if (e instanceof MappingError) throw e;
        throw new MappingError("fetching the mapping script timed out or was interrupted");
      }
      return Buffer.concat(chunks).toString("utf8");
    }
  }
}

function bounded(bytes: Buffer): string {
  if (bytes.length > MAX_MAPPING_BYTES) throw new MappingError(`the mapping script exceeds ${MAX_MAPPING_BYTES} bytes`);
  return bytes.toString("utf8");
}
