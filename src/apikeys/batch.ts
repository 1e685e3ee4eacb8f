import { AdminError, invalidArgument } from "../admin/errors.js";
import { requireUuid } from "../admin/paging.js";
import { isObject } from "../admin/validate.js";
import { parseKeyFields } from "./fields.js";
import { MAX_BATCH_IMPORT, MAX_RAW_KEY_LENGTH, MIN_RAW_KEY_LENGTH } from "./model.js";
import { digestOf } from "./secrets.js";
import type { ImportItem, ImportOutcome } from "./service.js";

type ItemError = { error: { code: string; message: string } };

/**
 * Spec 4.10: `{requests: [...]}` with 1 to 1000 items, else 400 for the whole request. Each item is validated on
 * its own: a bad item becomes its INVALID_ARGUMENT result, a raw key repeated in the batch an ALREADY_EXISTS one
 * (the first occurrence is imported). Raw keys are reduced to digests here and never appear in a message.
 */
export function parseBatchRequest(body: Record<string, unknown>): (ImportItem | ItemError)[] {
  const requests = body.requests;
  if (!Array.isArray(requests)) throw invalidArgument("requests must be an array of import items");
  if (requests.length === 0 || requests.length > MAX_BATCH_IMPORT) {
    throw invalidArgument(`requests must hold 1 to ${MAX_BATCH_IMPORT} items; got ${requests.length}`);
  }
  const firstIndexOf = new Map<string, number>();
  return requests.map((item: unknown, i): ImportItem | ItemError => {
    try {
      const parsed = parseItem(item, i);
      const hex = parsed.digest.toString("hex");
      const earlier = firstIndexOf.get(hex);
      if (earlier !== undefined) {
        return { error: { code: "ALREADY_EXISTS", message: `raw_key repeats the one of requests[${earlier}]` } };
      }
      firstIndexOf.set(hex, i);
      return parsed;
    } catch (e) {
      if (e instanceof AdminError) return { error: { code: e.status, message: e.message } };
      throw e;
    }
  });
}

function parseItem(item: unknown, i: number): ImportItem {
  const at = `requests[${i}].`;
  if (!isObject(item)) throw invalidArgument(`requests[${i}] must be a JSON object`);
  const raw = item.raw_key;
  if (raw === undefined || raw === null || raw === "") throw invalidArgument(`${at}raw_key is required`);
  if (typeof raw !== "string") throw invalidArgument(`${at}raw_key must be a string`);
  if (raw.length < MIN_RAW_KEY_LENGTH || raw.length > MAX_RAW_KEY_LENGTH) {
    throw invalidArgument(`${at}raw_key must be ${MIN_RAW_KEY_LENGTH} to ${MAX_RAW_KEY_LENGTH} characters`);
  }
  const org = item.organization_id;
  let organizationId: string | null = null;
  if (org !== undefined && org !== null && org !== "") {
    if (typeof org !== "string") throw invalidArgument(`${at}organization_id must be a string`);
    organizationId = requireUuid(org, `${at}organization_id`);
  }
  return { digest: digestOf(raw), organizationId, fields: parseKeyFields(item, at, true) };
}

/**
 * Issue 7 point 4: 200 when any item succeeded; when all failed, 409 if every failure was ALREADY_EXISTS,
 * else 400. The per-item results travel in the error's `details` then.
 */
export function batchFailure(outcomes: readonly ImportOutcome[], details: readonly unknown[]): AdminError | undefined {
  const errors = outcomes.flatMap((o) => ("error" in o ? [o.error] : []));
  if (errors.length < outcomes.length) return undefined;
  const allDuplicates = errors.every((e) => e.code === "ALREADY_EXISTS");
  return new AdminError(
    allDuplicates ? "ALREADY_EXISTS" : "INVALID_ARGUMENT",
    allDuplicates
      ? `all ${errors.length} keys already exist`
      : `all ${errors.length} items failed; see details for each item`,
    details,
  );
}
