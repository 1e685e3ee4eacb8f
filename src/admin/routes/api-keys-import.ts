import { digestOf } from "../../apikeys/secrets.js";
import type { ImportItem } from "../../apikeys/service.js";
import type { ItemError } from "../../apikeys/batch.js";
import { AdminError } from "../errors.js";
import { ImportItemBody } from "../schemas/api-keys.js";
import { valueChecker } from "../validation.js";
import { keyFieldsOf } from "./api-keys-fields.js";

const checkItem = valueChecker(ImportItemBody);

/**
 * The batch import: `{requests: [...]}` with 1 to 1000 items (the route's schema), else 400 for the whole request. Each item
 * is validated on its own: a bad item becomes its INVALID_ARGUMENT result, a raw key repeated in the batch an
 * ALREADY_EXISTS one (the first occurrence is imported). Raw keys are reduced to digests here and never appear in a
 * message.
 */
export function parseBatchRequest(requests: readonly unknown[]): (ImportItem | ItemError)[] {
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
  const body = checkItem(item, `requests[${i}]`);
  const org = body.organization_id;
  return {
    digest: digestOf(body.raw_key),
    organizationId: org === undefined || org === null || org === "" ? null : org.toLowerCase(),
    fields: keyFieldsOf(body, `requests[${i}].`),
  };
}
