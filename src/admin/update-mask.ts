import { invalidArgument } from "./errors.js";
import { isObject, type JsonObject } from "./json.js";

/**
 * AIP-134 / AIP-161 field masks for PATCH:
 * - no mask: every field populated in the body (output-only fields are ignored);
 * - `*`: every mutable field (a full replacement: unset ones are cleared);
 * - a listed field left unset or empty in the body is cleared to its zero value;
 * - unknown or immutable paths are INVALID_ARGUMENT.
 */
export interface MaskSpec {
  /** Mutable field paths, e.g. `name`, `webhook.url`. */
  readonly mutable: readonly string[];
  /** Fields that exist but cannot change (`key_id`, `create_time`…): naming them in a mask is an error. */
  readonly immutable: readonly string[];
  /** Map-valued fields whose keys may be addressed individually (`metadata.team`). */
  readonly maps?: readonly string[];
}

export interface FieldUpdate {
  /** `name`, `webhook.url`, or `metadata.team` (a map key). */
  readonly path: string;
  /** undefined: clear to the zero value. */
  readonly value: unknown;
}

export function resolveUpdateMask(mask: string | undefined, body: JsonObject, spec: MaskSpec): FieldUpdate[] {
  const paths = mask === undefined ? populatedPaths(body, spec) : parseMask(mask, spec);
  return paths.map((path) => {
    const value = valueAt(body, path);
    return { path, value: isEmpty(value) ? undefined : value };
  });
}

function parseMask(mask: string, spec: MaskSpec): string[] {
  const parts = mask
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  if (parts.length === 0) throw invalidArgument("update_mask is empty");
  if (parts.includes("*")) {
    if (parts.length > 1) throw invalidArgument("update_mask `*` cannot be combined with other paths");
    return [...spec.mutable];
  }
  const out: string[] = [];
  for (const part of parts) {
    const path = normalise(part);
    if (spec.immutable.includes(path) || spec.immutable.some((f) => path.startsWith(`${f}.`))) {
      throw invalidArgument(`update_mask path \`${part}\` names an immutable field`);
    }
    const known =
      spec.mutable.includes(path) ||
      (spec.maps ?? []).some((m) => path.startsWith(`${m}.`) && path.length > m.length + 1);
    if (!known) throw invalidArgument(`update_mask path \`${part}\` is not a field of this resource`);
    if (!out.includes(path)) out.push(path);
  }
  // A parent and its child in one mask: the parent wins (it replaces the whole sub-object).
  return out.filter((p) => !out.some((q) => q !== p && p.startsWith(`${q}.`)));
}

/** Fields may be written in camelCase in masks (`expireTime`), as AIP-161 allows. */
const normalise = (path: string): string =>
  path
    .split(".")
    .map((seg, i) => (i === 0 ? seg.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : seg))
    .join(".");

function populatedPaths(body: JsonObject, spec: MaskSpec): string[] {
  const out: string[] = [];
  for (const path of spec.mutable) {
    const top = path.split(".")[0] ?? path;
    if (!(top in body) || body[top] === undefined) continue;
    const nested = spec.mutable.filter((p) => p.startsWith(`${path}.`));
    if (nested.length > 0) continue; // described by its children
    if (path.includes(".") && valueAt(body, path) === undefined) continue;
    out.push(path);
  }
  return out;
}

function valueAt(body: JsonObject, path: string): unknown {
  let cur: unknown = body;
  for (const seg of path.split(".")) {
    if (!isObject(cur)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

function isEmpty(v: unknown): boolean {
  return (
    v === undefined ||
    v === null ||
    v === "" ||
    (Array.isArray(v) && v.length === 0) ||
    (isObject(v) && Object.keys(v).length === 0)
  );
}
