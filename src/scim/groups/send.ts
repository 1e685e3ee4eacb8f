import { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { GroupService } from "../../directory/groups/service.js";
import type { Group, Member } from "../../directory/groups/types.js";
import { etagOf } from "../etag.js";
import { parseProjection } from "../query/list-query.js";
import type { Projection } from "../query/projection.js";
import { stringifyWithRaw } from "../raw-json.js";
import { registryOf } from "../schema/client-registry.js";
import { memberElements } from "./members.js";
import { memberFieldsOf, renderGroup } from "./serialize.js";

/**
 * Members read per statement: about 1 MB of JSON text per chunk; a group up to this size is one plain answer.
 * Ten concurrent streams of 100 000-member groups then hold about 10 chunks between them, and the round trips stay
 * a small part of a read (1 000-row chunks took twice as long under load; docs/performance.md).
 */
export const MEMBER_CHUNK = 5000;

/**
 * Where the member list goes in a rendered group: a NUL character, which JSON.stringify escapes everywhere else,
 * spliced in as raw text (stringifyWithRaw), so the document splits there into what comes before and after it.
 */
const SLOT = "\u0000";

/**
 * Answers with one group under the request's projection. Its members are read `MEMBER_CHUNK` rows at a time: a group
 * that fits in one chunk is answered as one text, a larger one is streamed (the attributes, then each chunk rendered
 * as it is read, then the rest) with backpressure — the next chunk is read only once the socket has taken the
 * previous one — so no answer holds a whole 100 000-member list in memory.
 * `known` is the member list's JSON text when the caller knows it without reading (a group created empty).
 */
export async function sendGroup(
  groups: GroupService,
  req: FastifyRequest,
  reply: FastifyReply,
  baseUrl: string,
  group: Group,
  status = 200,
  known?: string,
): Promise<FastifyReply> {
  const projection = parseProjection(req.query as Record<string, unknown>);
  const render = (members: string | undefined) =>
    stringifyWithRaw(renderGroup(group, baseUrl, projection, members, registryOf(req.scimClient)));
  // The ETag goes out with the headers, before any member chunk is read (RFC 7644 §3.14).
  reply.code(status).header("etag", etagOf(group.version));
  const fields = memberFieldsOf(projection);
  if (fields === undefined || known !== undefined) return reply.send(render(fields === undefined ? undefined : known));
  const rows = groups.memberChunks(req.scimClient.organizationId, group.id, MEMBER_CHUNK);
  const first = await rows.next();
  if (first.done) return reply.send(render("[]"));
  const text = (members: readonly Member[]) => memberElements(members, fields, baseUrl);
  if (first.value.length < MEMBER_CHUNK) return reply.send(render(`[${text(first.value)}]`));
  const [head = "", tail = ""] = render(SLOT).split(SLOT);
  return reply.send(Readable.from(document(head, text(first.value), rows, text, tail), STREAM));
}

/** Bytes, not objects: the stream reads the next chunk only once the socket has taken about this much. */
const STREAM = { objectMode: false, highWaterMark: 64 * 1024 };

/** The document as buffers: each chunk is encoded once, and its rows and text are garbage as soon as it is sent. */
async function* document(
  head: string,
  first: string,
  rest: AsyncIterable<Member[]>,
  text: (members: readonly Member[]) => string,
  tail: string,
): AsyncGenerator<Buffer> {
  yield Buffer.from(`${head}[${first}`);
  for await (const chunk of rest) yield Buffer.from(`,${text(chunk)}`);
  yield Buffer.from(`]${tail}`);
}

/** Whether the request names a projection (RFC 7644 §3.9); a blank list counts as absent, as everywhere. */
export const asksForProjection = (query: unknown): boolean => {
  const projection: Projection = parseProjection(query as Record<string, unknown>);
  return projection.attributes !== undefined || projection.excludedAttributes !== undefined;
};
