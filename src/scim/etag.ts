import type { FastifyReply, FastifyRequest } from "fastify";
import type { ExpectedVersions } from "../directory/preconditions.js";

/**
 * RFC 7644 §3.14 with RFC 9110 §8.8.3 and §13.1: a resource's `meta.version` is a weak entity tag made from its row
 * version, and the same text is its `ETag` header. Weak: two answers of one version may differ in bytes (projection,
 * another resource's display name), so they promise semantic equivalence only.
 */
export const etagOf = (version: string): string => `W/"${version}"`;

/** An entity tag as a header lists it: optional `W/`, then a quoted opaque tag (which may hold commas). */
const ENTITY_TAG = /(?:W\/)?"([^"]*)"/g;

/**
 * A conditional header: "any" for `*`, else the opaque tags it lists (weak comparison ignores `W/`), or undefined
 * when the request does not carry it. A value that lists no well-formed tag matches nothing.
 */
export function conditionOf(value: string | string[] | undefined): "any" | string[] | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(",") : value;
  if (text.trim() === "*") return "any";
  return [...text.matchAll(ENTITY_TAG)].map((m) => m[1] ?? "");
}

/** What a PUT, PATCH or DELETE expects of the row's version (If-Match); undefined for no condition or `*`. */
export function expectedOf(req: FastifyRequest): ExpectedVersions {
  const condition = conditionOf(req.headers["if-match"]);
  return condition === "any" ? undefined : condition;
}

/** Whether a GET's If-None-Match names the current version (or `*`): the client's copy is current (304). */
export function notModified(req: FastifyRequest, version: string): boolean {
  const condition = conditionOf(req.headers["if-none-match"]);
  return condition === "any" || condition?.includes(version) === true;
}

/** The ETag header of an answer carrying one resource at `version`. */
export const withEtag = (reply: FastifyReply, version: string): FastifyReply => reply.header("etag", etagOf(version));
