import jsonata from "jsonata";
import type { Clock } from "../../platform/clock.js";
import { DEFAULT_MAPPING, defaultTraits } from "./default.js";
import { MappingError } from "./errors.js";
import {
  type Evaluation,
  MAPPING_MAX_DEPTH,
  MAPPING_MAX_SEQUENCE,
  MAPPING_TIMEOUT_MS,
  type MappingEvaluator,
} from "./evaluator.js";
import { isMappingUrl, type MappingSources, type MappingText } from "./source.js";

/** Scripts fetched from a URL or a file are read again after this long; inline ones stay cached. */
export const MAPPING_URL_TTL_MS = 5 * 60_000;
const MAX_CACHED = 256;

export type Traits = Record<string, unknown>;

export interface CompiledMapping {
  evaluate(user: Record<string, unknown>): Promise<Traits>;
}

const messageOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e && typeof e.message === "string"
    ? e.message.slice(0, 300)
    : "unknown error";

const codeOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : "unknown";

/**
 * A JSONata error, quoted only when the script came inline from the admin: the message of a script read from a file
 * or a URL may quote that script, so only its JSONata error code is named.
 */
const describe = (e: unknown, script: MappingText): string =>
  script.fetched ? `JSONata error ${codeOf(e)} in the fetched script` : messageOf(e);

/** The default mapping is ours and has no regular expression: JSONata's own limits suffice on the main thread. */
const defaultExpression = jsonata(DEFAULT_MAPPING, {
  timeout: MAPPING_TIMEOUT_MS,
  stack: MAPPING_MAX_DEPTH,
  sequence: MAPPING_MAX_SEQUENCE,
});

/**
 * Per-client data mappings: a JSONata expression from the SCIM user to identity traits, inline or from a URL. The
 * script text is read (under the source policy) and syntax-checked once and cached; every evaluation of a client's
 * own script runs in the worker pool under a hard deadline. Every failure is a MappingError.
 */
export class DataMapper {
  readonly #clock: Clock;
  readonly #sources: MappingSources;
  readonly #evaluator: MappingEvaluator;
  readonly #cache = new Map<string, { script: MappingText; expires: number }>();

  constructor(clock: Clock, sources: MappingSources, evaluator: MappingEvaluator) {
    this.#clock = clock;
    this.#sources = sources;
    this.#evaluator = evaluator;
  }

  /**
   * The compiled mapping of a client; `null` means the documented default. `organization` is whose share of the
   * worker pool its evaluations take (evaluator.ts).
   */
  async forSource(source: string | null, organization = ""): Promise<CompiledMapping> {
    if (source === null) {
      // The default mapping in plain code when the user has the usual shape (identical traits), JSONata otherwise.
      return { evaluate: async (user) => defaultTraits(user) ?? run(defaultExpression, user) };
    }
    const script = await this.#script(source);
    return { evaluate: (user) => this.#evaluate(script, user, organization) };
  }

  async close(): Promise<void> {
    await Promise.all([this.#evaluator.close(), this.#sources.close()]);
  }

  async #script(source: string): Promise<MappingText> {
    const now = this.#clock.now().getTime();
    const hit = this.#cache.get(source);
    if (hit !== undefined && hit.expires > now) return hit.script;
    const script = await this.#sources.text(source);
    try {
      // Parsing runs no regular expression: syntax errors are found here, before any worker is involved.
      jsonata(script.text);
    } catch (e) {
      throw new MappingError(`the mapping is not a valid JSONata expression: ${describe(e, script)}`);
    }
    if (this.#cache.size >= MAX_CACHED) this.#cache.delete(this.#cache.keys().next().value ?? "");
    this.#cache.set(source, {
      script,
      expires: isMappingUrl(source) ? now + MAPPING_URL_TTL_MS : Number.POSITIVE_INFINITY,
    });
    return script;
  }

  async #evaluate(script: MappingText, user: Record<string, unknown>, organization: string): Promise<Traits> {
    const outcome: Evaluation = await this.#evaluator.evaluate(script.text, user, organization);
    if (!outcome.ok) throw new MappingError(`evaluating the mapping failed: ${describe(outcome, script)}`);
    return traitsOf(outcome.json);
  }
}

async function run(expression: ReturnType<typeof jsonata>, user: Record<string, unknown>): Promise<Traits> {
  let result: unknown;
  try {
    result = await expression.evaluate(user);
  } catch (e) {
    throw new MappingError(`evaluating the mapping failed: ${messageOf(e)}`);
  }
  return traitsOf(result === undefined ? undefined : (JSON.stringify(result) ?? "null"));
}

/** JSONata sequences and functions are not JSON; the JSON text is exactly what would be stored. */
function traitsOf(json: string | undefined): Traits {
  if (json === undefined) return {};
  const value: unknown = JSON.parse(json);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new MappingError("the mapping must produce a JSON object");
  }
  return value as Traits;
}
