import { promisify } from "node:util";
import { brotliCompress, brotliDecompress, constants } from "node:zlib";

/**
 * How a segment of the SCIM request log is stored (`scim_request_log_segments`, migration 0017): the entries one
 * client had in one written batch, in two Brotli-compressed values.
 *
 * - `entries`: a JSON array of the entries' fields without their bodies, each an array in the order of
 *   `StoredFields`, oldest first.
 * - `bodies`: each entry's request body then its response body, each as a 32-bit big-endian byte length (-1: none)
 *   and that many bytes of UTF-8. A body is copied as it is, not escaped into a JSON string.
 *
 * Brotli at quality 1 costs Roster about a microsecond an entry, in the thread pool, and shrinks the bytes
 * PostgreSQL stores and logs five- to tenfold (successive SCIM bodies are alike): the database then spends a
 * fifth of the CPU per entry. A page of the log decompresses only `entries`.
 *
 * Changing this format needs a migration that rewrites the stored segments.
 */

/** One SCIM request as the log keeps it: bodies redacted and cut at 64 KiB (observability/request-log/entry.ts). */
export interface RequestLogEntry extends RequestLogSummary {
  readonly request_body: string | null;
  readonly response_body: string | null;
}

/** An entry without its bodies, as a page of the log shows it. */
export interface RequestLogSummary {
  readonly id: string;
  readonly client_id: string;
  readonly organization_id: string;
  readonly time: Date;
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly status: number;
  readonly scim_type: string | null;
  readonly duration_ms: number;
  readonly resource_id: string | null;
  readonly request_truncated: boolean;
  readonly response_truncated: boolean;
  readonly user_agent: string | null;
}

/** A segment's columns. */
export interface Segment {
  readonly client_id: string;
  readonly last_id: string;
  readonly first_id: string;
  readonly organization_id: string;
  readonly entry_count: number;
  readonly statuses: readonly number[];
  readonly methods: readonly string[];
  readonly resource_ids: readonly string[];
  readonly entries: Buffer;
  readonly bodies: Buffer;
}

/** An entry's fields in `entries`. */
type StoredFields = [
  id: string,
  timeMs: number,
  method: string,
  path: string,
  query: string,
  status: number,
  scimType: string | null,
  durationMs: number,
  resourceId: string | null,
  requestTruncated: boolean,
  responseTruncated: boolean,
  userAgent: string | null,
];

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

const brotli = (bytes: number) => ({
  params: {
    [constants.BROTLI_PARAM_QUALITY]: 1,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    [constants.BROTLI_PARAM_SIZE_HINT]: bytes,
  },
});

/** The segment of `entries`, all of one client, in the order they were written. */
export async function encodeSegment(entries: readonly RequestLogEntry[]): Promise<Segment> {
  const first = entries[0];
  if (first === undefined) throw new Error("a segment holds at least one entry");
  let firstId = first.id;
  let lastId = first.id;
  const statuses = new Set<number>();
  const methods = new Set<string>();
  const resources = new Set<string>();
  const fields: StoredFields[] = [];
  for (const e of entries) {
    if (e.client_id !== first.client_id) throw new Error("a segment holds the entries of one client");
    if (e.id < firstId) firstId = e.id;
    if (e.id > lastId) lastId = e.id;
    statuses.add(e.status);
    methods.add(e.method);
    if (e.resource_id !== null) resources.add(e.resource_id);
    fields.push([
      e.id,
      e.time.getTime(),
      e.method,
      e.path,
      e.query,
      e.status,
      e.scim_type,
      e.duration_ms,
      e.resource_id,
      e.request_truncated,
      e.response_truncated,
      e.user_agent,
    ]);
  }
  const json = Buffer.from(JSON.stringify(fields), "utf8");
  const bodies = packBodies(entries);
  const [packedEntries, packedBodies] = await Promise.all([
    compress(json, brotli(json.length)),
    compress(bodies, brotli(bodies.length)),
  ]);
  return {
    client_id: first.client_id,
    last_id: lastId,
    first_id: firstId,
    organization_id: first.organization_id,
    entry_count: entries.length,
    statuses: [...statuses],
    methods: [...methods],
    resource_ids: [...resources],
    entries: packedEntries,
    bodies: packedBodies,
  };
}

/** A segment's entries without their bodies, oldest first. */
export async function decodeSummaries(segment: {
  readonly client_id: string;
  readonly organization_id: string;
  readonly entries: Buffer;
}): Promise<RequestLogSummary[]> {
  const fields = JSON.parse((await decompress(segment.entries)).toString("utf8")) as StoredFields[];
  return fields.map((f) => ({
    id: f[0],
    client_id: segment.client_id,
    organization_id: segment.organization_id,
    time: new Date(f[1]),
    method: f[2],
    path: f[3],
    query: f[4],
    status: f[5],
    scim_type: f[6],
    duration_ms: f[7],
    resource_id: f[8],
    request_truncated: f[9],
    response_truncated: f[10],
    user_agent: f[11],
  }));
}

/** The request and response bodies of the segment's `index`-th entry. */
export async function decodeBodies(
  bodies: Buffer,
  index: number,
): Promise<{ request: string | null; response: string | null }> {
  const next = bodyReader(await decompress(bodies));
  for (let i = 0; i < index; i++) {
    next();
    next();
  }
  return { request: next(), response: next() };
}

/** Every entry of a segment with its bodies, oldest first. */
export async function decodeSegment(segment: {
  readonly client_id: string;
  readonly organization_id: string;
  readonly entries: Buffer;
  readonly bodies: Buffer;
}): Promise<RequestLogEntry[]> {
  const next = bodyReader(await decompress(segment.bodies));
  return (await decodeSummaries(segment)).map((summary) => ({
    ...summary,
    request_body: next(),
    response_body: next(),
  }));
}

/** Reads the length-prefixed bodies one after the other. */
function bodyReader(all: Buffer): () => string | null {
  let at = 0;
  return () => {
    const length = all.readInt32BE(at);
    at += 4;
    if (length < 0) return null;
    at += length;
    return all.toString("utf8", at - length, at);
  };
}

/** Each entry's request body then response body, length-prefixed UTF-8. */
function packBodies(entries: readonly RequestLogEntry[]): Buffer {
  let size = 0;
  for (const e of entries) {
    size += 8;
    if (e.request_body !== null) size += Buffer.byteLength(e.request_body, "utf8");
    if (e.response_body !== null) size += Buffer.byteLength(e.response_body, "utf8");
  }
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  const put = (body: string | null) => {
    if (body === null) {
      at = out.writeInt32BE(-1, at);
      return;
    }
    const length = out.write(body, at + 4, "utf8");
    out.writeInt32BE(length, at);
    at += 4 + length;
  };
  for (const e of entries) {
    put(e.request_body);
    put(e.response_body);
  }
  return out;
}
