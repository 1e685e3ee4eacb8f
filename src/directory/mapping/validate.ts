import jsonata from "jsonata";
import { invalidArgument } from "../../admin/errors.js";

const URL_SCHEMES = ["https://", "http://", "file://", "base64://"];

/** A mapping is a JSONata expression, or a URL to fetch one from; expressions must at least compile. */
export async function validateMappingSource(source: string): Promise<void> {
  const trimmed = source.trim();
  if (trimmed === "") throw invalidArgument("mapping must not be empty");
  if (URL_SCHEMES.some((s) => trimmed.toLowerCase().startsWith(s))) {
    if (trimmed.toLowerCase().startsWith("base64://")) {
      compile(Buffer.from(trimmed.slice("base64://".length), "base64").toString("utf8"));
    } else if (!URL.canParse(trimmed)) {
      throw invalidArgument("mapping URL is not a valid URL");
    }
    return;
  }
  compile(trimmed);
}

function compile(expression: string): void {
  try {
    jsonata(expression);
  } catch (e) {
    const message = typeof e === "object" && e !== null && "message" in e ? String(e.message) : "syntax error";
    throw invalidArgument(`mapping is not a valid JSONata expression: ${message}`);
  }
}
