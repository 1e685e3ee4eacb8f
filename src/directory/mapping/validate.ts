import jsonata from "jsonata";
import { InvalidMappingError, MappingError } from "./errors.js";
import type { MappingSources } from "./source.js";

const URL_SCHEMES = ["https://", "http://", "file://", "base64://"];

/**
 * A mapping is a JSONata expression, or a URL to fetch one from; expressions must at least compile, and a URL must
 * be one the source policy would read (checked again, resolved, whenever it is read).
 */
export function mappingValidator(sources: MappingSources): (source: string) => Promise<void> {
  return async (source) => {
    const trimmed = source.trim();
    if (trimmed === "") throw invalid("mapping must not be empty");
    const lower = trimmed.toLowerCase();
    if (!URL_SCHEMES.some((s) => lower.startsWith(s))) return compile(trimmed);
    if (lower.startsWith("base64://")) {
      return compile(Buffer.from(trimmed.slice("base64://".length), "base64").toString("utf8"));
    }
    if (!URL.canParse(trimmed)) throw invalid("mapping URL is not a valid URL");
    try {
      sources.check(trimmed);
    } catch (e) {
      if (e instanceof MappingError) throw invalid(`mapping source refused: ${e.message}`);
      throw e;
    }
  };
}

const invalid = (message: string): InvalidMappingError => new InvalidMappingError(message);

function compile(expression: string): void {
  try {
    jsonata(expression);
  } catch (e) {
    const message = typeof e === "object" && e !== null && "message" in e ? String(e.message) : "syntax error";
    throw invalid(`mapping is not a valid JSONata expression: ${message}`);
  }
}
