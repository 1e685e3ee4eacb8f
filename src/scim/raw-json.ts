/** JSON text made elsewhere (PostgreSQL's json_agg of a member list) to embed verbatim in a response body. */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** A JSON array of JSON texts, as one RawJson: a list page of 100 users is then one splice, not 100. */
export const rawArray = (texts: readonly string[]): RawJson => new RawJson(`[${texts.join(",")}]`);

// A string holding NUL cannot come from the database (PostgreSQL text refuses it) nor from a validated request, and
// JSON.stringify escapes it, so `"\u0000raw:N"` in the output can only be a placeholder written here.
const PLACEHOLDER = /"\\u0000raw:(\d+)"/g;

/**
 * JSON.stringify that splices RawJson values in as they are, so a 100 000-member list goes from the database
 * to the socket as one string, never as 100 000 objects.
 */
export function stringifyWithRaw(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (!(v instanceof RawJson)) return v;
    raws.push(v.text);
    return `\u0000raw:${raws.length - 1}`;
  });
  return raws.length === 0 ? text : text.replace(PLACEHOLDER, (_m, n: string) => raws[Number(n)] ?? "null");
}
