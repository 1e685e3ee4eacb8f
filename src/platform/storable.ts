/**
 * What PostgreSQL cannot store: `text` and `jsonb` refuse U+0000, and a UTF-16 surrogate without its pair has no
 * UTF-8 encoding. Both are refused at the edge, before any query, so they answer 400 instead of a database error.
 */

/** Anything in the range a bad character can be in: the fast path skips every other string at once. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what this looks for.
const SUSPECT = /[\u0000\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export type Unstorable = "a NUL character" | "an unpaired UTF-16 surrogate";

/** Why a string cannot be stored, or undefined when it can. */
export function unstorableIn(text: string): Unstorable | undefined {
  if (!SUSPECT.test(text)) return undefined;
  if (text.includes("\u0000")) return "a NUL character";
  return LONE_SURROGATE.test(text) ? "an unpaired UTF-16 surrogate" : undefined;
}

export const isStorableText = (text: string): boolean => unstorableIn(text) === undefined;

export interface InputProblem {
  /** Where in the value, as the client wrote it: `members[3].value`, `["odd key"]`; "" for the value itself. */
  readonly at: string;
  /** What is wrong there, to complete "… contains …" or "… is nested more than N levels deep". */
  readonly problem: Unstorable | "too deep";
}

interface Frame {
  readonly value: object;
  readonly depth: number;
  readonly parent: Frame | undefined;
  readonly key: string | number | undefined;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `members[3].value`: the keys from the root to `frame`, then `key` when given. */
function pathOf(frame: Frame | undefined, key?: string | number): string {
  const keys: (string | number)[] = key === undefined ? [] : [key];
  for (let f = frame; f?.key !== undefined; f = f.parent) keys.push(f.key);
  return keys
    .reverse()
    .map((k, i) => {
      if (typeof k === "number") return `[${k}]`;
      if (IDENTIFIER.test(k)) return i === 0 ? k : `.${k}`;
      return `[${JSON.stringify(k)}]`;
    })
    .join("");
}

/**
 * The first string (value or object key) PostgreSQL cannot store in a parsed JSON value, or a nesting deeper than
 * `maxDepth` (recursive code further on — and PostgreSQL's own jsonb parser — would run out of stack). Iterative, so
 * the check itself cannot overflow whatever the depth; strings are checked in place, only containers are stacked.
 */
export function findUnstorable(root: unknown, maxDepth: number): InputProblem | undefined {
  if (typeof root === "string") {
    const bad = unstorableIn(root);
    return bad === undefined ? undefined : { at: "", problem: bad };
  }
  if (typeof root !== "object" || root === null) return undefined;
  const stack: Frame[] = [{ value: root, depth: 0, parent: undefined, key: undefined }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    if (frame.depth >= maxDepth) return { at: pathOf(frame), problem: "too deep" };
    const container = frame.value;
    const isArray = Array.isArray(container);
    const keys = isArray ? undefined : Object.keys(container);
    const length = isArray ? container.length : (keys as string[]).length;
    for (let i = length - 1; i >= 0; i--) {
      const key: string | number = isArray ? i : ((keys as string[])[i] as string);
      if (typeof key === "string") {
        const bad = unstorableIn(key);
        if (bad !== undefined) return { at: pathOf(frame, key), problem: bad };
      }
      const child: unknown = (container as Record<string | number, unknown>)[key];
      if (typeof child === "string") {
        const bad = unstorableIn(child);
        if (bad !== undefined) return { at: pathOf(frame, key), problem: bad };
      } else if (typeof child === "object" && child !== null) {
        stack.push({ value: child, depth: frame.depth + 1, parent: frame, key });
      }
    }
  }
  return undefined;
}

/** The first query parameter or path parameter that cannot be stored: its name and why. */
export function findUnstorableParameter(
  parameters: unknown,
): { readonly name: string; readonly problem: Unstorable } | undefined {
  if (typeof parameters !== "object" || parameters === null) return undefined;
  for (const [name, value] of Object.entries(parameters)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    const nameProblem = unstorableIn(name);
    if (nameProblem !== undefined) return { name: JSON.stringify(name), problem: nameProblem };
    for (const v of values) {
      const problem = typeof v === "string" ? unstorableIn(v) : undefined;
      if (problem !== undefined) return { name, problem };
    }
  }
  return undefined;
}

/** "members[3].value contains a NUL character" / "the request body is nested more than 32 levels deep". */
export function describeProblem(problem: InputProblem, maxDepth: number, whole = "the request body"): string {
  const where = problem.at === "" ? whole : problem.at;
  if (problem.problem === "too deep") return `${whole} is nested more than ${maxDepth} levels deep (at ${where})`;
  return `${where} contains ${problem.problem}, which cannot be stored`;
}
