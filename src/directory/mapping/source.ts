import { open } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { MappingError } from "./errors.js";

/** Bounds on fetching a mapping script from a URL (issue 3 point 7). */
export const MAPPING_FETCH_TIMEOUT_MS = 5_000;
export const MAX_MAPPING_BYTES = 256 * 1024;

const SCHEMES = ["https://", "http://", "file://", "base64://"] as const;

export const isMappingUrl = (source: string): boolean => {
  const lower = source.trim().toLowerCase();
  return SCHEMES.some((s) => lower.startsWith(s));
};

/** The JSONata text of a mapping: the source itself, or what its URL (https, http, file, base64) points at. */
export async function mappingText(source: string): Promise<string> {
  const trimmed = source.trim();
  const lower = trimmed.toLowerCase();
  if (lower.startsWith("base64://")) return bounded(Buffer.from(trimmed.slice("base64://".length), "base64"));
  if (lower.startsWith("file://")) return readFileBounded(trimmed);
  if (lower.startsWith("http://") || lower.startsWith("https://")) return fetchBounded(trimmed);
  return trimmed;
}

function bounded(bytes: Buffer): string {
  if (bytes.length > MAX_MAPPING_BYTES) throw new MappingError(`the mapping script exceeds ${MAX_MAPPING_BYTES} bytes`);
  return bytes.toString("utf8");
}

async function readFileBounded(url: string): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(fileURLToPath(url), "r");
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

async function fetchBounded(url: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(MAPPING_FETCH_TIMEOUT_MS), redirect: "follow" });
  } catch (e) {
    const timedOut = e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError");
    throw new MappingError(
      timedOut ? "fetching the mapping script timed out" : "the mapping script could not be fetched",
    );
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new MappingError(`fetching the mapping script answered HTTP ${response.status}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  try {
    for (;;) {
      const next = await reader?.read();
      if (next === undefined || next.done) break;
      size += next.value.byteLength;
      if (size > MAX_MAPPING_BYTES) {
        await reader?.cancel();
        throw new MappingError(`the mapping script exceeds ${MAX_MAPPING_BYTES} bytes`);
      }
      chunks.push(Buffer.from(next.value));
    }
  } catch (e) {
    if (e instanceof MappingError) throw e;
    throw new MappingError("fetching the mapping script timed out or was interrupted");
  }
  return Buffer.concat(chunks).toString("utf8");
}
