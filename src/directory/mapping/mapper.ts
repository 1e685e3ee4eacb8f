import jsonata from "jsonata";
import type { Clock } from "../../platform/clock.js";
import { DEFAULT_MAPPING, defaultTraits } from "./default.js";
import { MappingError } from "./errors.js";
import { isMappingUrl, mappingText } from "./source.js";

/** Guardrails of every evaluation (JSONata 2 options): wall time, stack depth and sequence length. */
export const MAPPING_TIMEOUT_MS = 1_000;
export const MAPPING_MAX_DEPTH = 200;
const MAPPING_MAX_SEQUENCE = 100_000;
/** Scripts fetched from a URL are re-fetched after this long; inline ones stay compiled. */
export const MAPPING_URL_TTL_MS = 5 * 60_000;
const MAX_CACHED = 256;

export type Traits = Record<string, unknown>;

export interface CompiledMapping {
  evaluate(user: Record<string, unknown>): Promise<Traits>;
}

type Expression = ReturnType<typeof jsonata>;

const messageOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e && typeof e.message === "string"
    ? e.message.slice(0, 300)
    : "unknown error";

/**
 * Per-client data mappings (issue 3 point 7): a JSONata expression from the SCIM user to identity traits, inline or
 * from a URL, compiled once and cached. Every failure is a MappingError.
 */
export class DataMapper {
  readonly #clock: Clock;
  readonly #cache = new Map<string, { expression: Expression; expires: number }>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** The compiled mapping of a client; `null` means the documented default. */
  async forSource(source: string | null): Promise<CompiledMapping> {
    const expression = await this.#compiled(source ?? DEFAULT_MAPPING);
    if (source !== null) return { evaluate: (user) => evaluate(expression, user) };
    // The default mapping in plain code when the user has the usual shape (identical traits), JSONata otherwise.
    return { evaluate: async (user) => defaultTraits(user) ?? evaluate(expression, user) };
  }

  async #compiled(source: string): Promise<Expression> {
    const now = this.#clock.now().getTime();
    const hit = this.#cache.get(source);
    if (hit !== undefined && hit.expires > now) return hit.expression;
    const text = await mappingText(source);
    let expression: Expression;
    try {
      expression = jsonata(text, {
        timeout: MAPPING_TIMEOUT_MS,
        stack: MAPPING_MAX_DEPTH,
        sequence: MAPPING_MAX_SEQUENCE,
      });
    } catch (e) {
      throw new MappingError(`the mapping is not a valid JSONata expression: ${messageOf(e)}`);
    }
    if (this.#cache.size >= MAX_CACHED) this.#cache.delete(this.#cache.keys().next().value ?? "");
    this.#cache.set(source, {
      expression,
      expires: isMappingUrl(source) ? now + MAPPING_URL_TTL_MS : Number.POSITIVE_INFINITY,
    });
    return expression;
  }
}

async function evaluate(expression: Expression, user: Record<string, unknown>): Promise<Traits> {
  let result: unknown;
  try {
    result = await expression.evaluate(user);
  } catch (e) {
    throw new MappingError(`evaluating the mapping failed: ${messageOf(e)}`);
  }
  if (result === undefined) return {};
  // JSONata sequences and functions are not JSON; a round trip keeps exactly what would be stored.
  const json: unknown = JSON.parse(JSON.stringify(result) ?? "null");
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new MappingError("the mapping must produce a JSON object");
  }
  return json as Traits;
}
