import fc from "fast-check";
import { ENTERPRISE_SCHEMA, GROUP_SCHEMA, PATCH_OP, USER_SCHEMA } from "../helpers/constants.js";

/**
 * Generators of hostile input: valid request shapes whose values are what a broken or malicious client sends —
 * NUL, lone surrogates, huge strings, deep nesting, numbers where strings go, prototype keys, unicode edge cases.
 */

/** Characters that have broken a server somewhere: NUL, surrogate halves, BOM, bidi, line separators, expanding case. */
const NASTY = [
  "\u0000",
  "\ud800",
  "\udfff",
  "\udc00\ud800",
  "\ud83d",
  "\ud83d\ude00",
  "\ufeff",
  "\u202e",
  "\u2028",
  "\u0085",
  "\uffff",
  "İ",
  "ß",
  "ﬃ",
  "𝕏",
  "\u0301",
  "%00",
  "%zz",
  "\\",
  '"',
  "'",
  "*",
  "../",
  "$" + "{x}",
  "{{x}}",
  "' or 1=1 --",
  "\r\n",
  "\t",
  " ",
];

const nastyChar = fc.constantFrom(...NASTY);

/** A string of mixed ordinary and nasty pieces. */
const mixedString = fc
  .array(fc.oneof({ weight: 2, arbitrary: fc.string({ maxLength: 8 }) }, { weight: 1, arbitrary: nastyChar }), {
    maxLength: 8,
  })
  .map((parts) => parts.join(""));

/** Long strings around the limits (512 characters for indexed attributes) and far beyond. */
const hugeString = fc
  .tuple(
    fc.constantFrom(1, 511, 512, 513, 1000, 2700, 10_000, 70_000),
    fc.constantFrom("a", "é", "€", "𝕏", "İ", "ab\u0000"),
  )
  .map(([n, unit]) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: mixedString },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 12 }) },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: nastyChar },
);

/** A value nested `depth` levels deep, as arrays or objects. */
export const deeplyNested: fc.Arbitrary<unknown> = fc
  .tuple(fc.constantFrom(2, 31, 32, 33, 100, 3000), fc.boolean())
  .map(([depth, arrays]) => {
    let value: unknown = "leaf";
    for (let i = 0; i < depth; i++) value = arrays ? [value] : { value };
    return value;
  });

const PROTO_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf"];

/** An object whose own keys include prototype names (built by JSON.parse, as a server receives them). */
const protoObject: fc.Arbitrary<unknown> = fc
  .tuple(fc.constantFrom(...PROTO_KEYS), fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant({})))
  .map(([key, value]) => JSON.parse(`{${JSON.stringify(key)}: ${JSON.stringify(value)}}`));

const scalar: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(0, -1, 2 ** 53, 1e308, -0, "true", "False", "", "[]", "{}"),
);

/** Anything JSON can hold, hostile at every level. */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 4, arbitrary: scalar },
    { weight: 1, arbitrary: fc.array(tie("value"), { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.dictionary(hostileKey(), tie("value"), { maxKeys: 4 }) },
    { weight: 1, arbitrary: deeplyNested },
    { weight: 1, arbitrary: protoObject },
  ),
})).value;

function hostileKey(): fc.Arbitrary<string> {
  return fc.oneof(fc.constantFrom(...PROTO_KEYS), mixedString, fc.string({ maxLength: 6 }));
}

/** Mostly a good value, sometimes a hostile one: requests get past the first check often enough to reach deeper. */
const goodOrHostile = <T>(good: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 10, arbitrary: good }, { weight: 1, arbitrary: hostileValue });

/** Valid but unusual text: any grapheme (emoji, combining marks, right-to-left, expanding case), no NUL. */
const edgyString = fc
  .string({ unit: "grapheme", minLength: 1, maxLength: 16 })
  .filter((s) => !s.includes("\u0000") && s.trim() !== "");

const email = fc
  .tuple(fc.stringMatching(/^[a-z0-9]{1,10}$/), fc.constantFrom("example.com", "acme.test"))
  .map(([local, domain]) => `${local}@${domain}`);

/** Optional keys of a record: some present, some not. */
const partial = <T extends Record<string, fc.Arbitrary<unknown>>>(model: T) => fc.record(model, { requiredKeys: [] });

/** Keys a valid request needs, present nine times in ten. */
const usually = <T extends Record<string, fc.Arbitrary<unknown>>>(model: T, keys: (keyof T & string)[]) =>
  fc.oneof(
    { weight: 9, arbitrary: fc.record(model, { requiredKeys: keys }) },
    { weight: 1, arbitrary: partial(model) },
  );

/** Keys no schema knows, now and then. */
const extraKeys = fc.oneof(
  { weight: 4, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.dictionary(hostileKey(), hostileValue, { maxKeys: 2 }) },
);

export const userBody: fc.Arbitrary<unknown> = fc
  .tuple(
    usually(
      {
        schemas: goodOrHostile(fc.constantFrom([USER_SCHEMA], [USER_SCHEMA, ENTERPRISE_SCHEMA])),
        userName: goodOrHostile(email),
        externalId: goodOrHostile(fc.uuid()),
        displayName: goodOrHostile(edgyString),
        active: goodOrHostile(fc.boolean()),
        name: goodOrHostile(partial({ givenName: goodOrHostile(edgyString), familyName: goodOrHostile(edgyString) })),
        emails: goodOrHostile(
          fc.array(
            partial({ value: goodOrHostile(email), type: goodOrHostile(fc.constant("work")), primary: fc.boolean() }),
            {
              maxLength: 3,
            },
          ),
        ),
        phoneNumbers: goodOrHostile(
          fc.array(partial({ value: edgyString, type: fc.constant("work") }), { maxLength: 2 }),
        ),
        timezone: goodOrHostile(fc.constantFrom("Europe/Paris", "UTC")),
        [ENTERPRISE_SCHEMA]: goodOrHostile(
          partial({
            employeeNumber: goodOrHostile(fc.string({ maxLength: 8 })),
            department: goodOrHostile(edgyString),
            manager: goodOrHostile(partial({ value: goodOrHostile(fc.uuid()) })),
          }),
        ),
      },
      ["schemas", "userName"],
    ),
    extraKeys,
  )
  .map(([known, extra]) => ({ ...extra, ...known }));

export const groupBody = (memberIds: readonly string[]): fc.Arbitrary<unknown> =>
  fc
    .tuple(
      usually(
        {
          schemas: goodOrHostile(fc.constant([GROUP_SCHEMA])),
          displayName: goodOrHostile(edgyString),
          externalId: goodOrHostile(fc.uuid()),
          members: goodOrHostile(
            fc.array(
              partial({
                value: goodOrHostile(fc.constantFrom(...memberIds)),
                type: goodOrHostile(fc.constant("User")),
              }),
              {
                maxLength: 3,
              },
            ),
          ),
        },
        ["displayName"],
      ),
      extraKeys,
    )
    .map(([known, extra]) => ({ ...extra, ...known }));

const USER_PATHS = [
  "userName",
  "displayName",
  "active",
  "externalId",
  "name.givenName",
  "emails",
  'emails[type eq "work"].value',
  'emails[type eq "work"]',
  "phoneNumbers",
  "title",
  ENTERPRISE_SCHEMA,
  `${ENTERPRISE_SCHEMA}:manager`,
  `${ENTERPRISE_SCHEMA}:employeeNumber`,
  "members",
  'members[value eq "x"]',
  "meta.lastModified",
  "id",
];

/** What PATCH values usually are: a string, a boolean, a multi-valued list, an object of attributes. */
const patchValue: fc.Arbitrary<unknown> = fc.oneof(
  edgyString,
  fc.boolean(),
  fc.constantFrom("True", "false"),
  fc.array(fc.record({ value: edgyString, type: fc.constantFrom("work", "home") }), { maxLength: 2 }),
  fc.record({ displayName: edgyString, userName: email, title: edgyString }, { requiredKeys: [] }),
  fc.record({
    [ENTERPRISE_SCHEMA]: fc.record(
      { department: edgyString, schemas: fc.constant([ENTERPRISE_SCHEMA]) },
      { requiredKeys: [] },
    ),
  }),
);

export const patchBody = (paths: readonly string[] = USER_PATHS): fc.Arbitrary<unknown> =>
  fc.record(
    {
      schemas: goodOrHostile(fc.constant([PATCH_OP])),
      Operations: goodOrHostile(
        fc.array(
          usually(
            {
              op: goodOrHostile(fc.constantFrom("add", "replace", "remove", "Add", "Replace")),
              path: goodOrHostile(fc.oneof(fc.constantFrom(...paths), hostileString)),
              value: goodOrHostile(patchValue),
            },
            ["op", "value"],
          ),
          { minLength: 1, maxLength: 4 },
        ),
      ),
    },
    { requiredKeys: ["schemas", "Operations"] },
  );

export const GROUP_PATCH_PATHS = ["displayName", "externalId", "members", 'members[value eq "x"]', "members.value"];

const FILTER_ATTRIBUTES = ["userName", "externalId", "emails.value", "emails", "displayName", "id", "meta.created"];

/** Filters: well-formed ones with hostile literals, and anything at all. */
export const filter: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(fc.constantFrom(...FILTER_ATTRIBUTES), fc.constantFrom("eq", "co", "sw", "pr", "gt", "EQ"), hostileString)
    .map(([a, op, v]) => `${a} ${op} ${JSON.stringify(v)}`),
  fc.tuple(fc.constantFrom(...FILTER_ATTRIBUTES), hostileString).map(([a, v]) => `${a} eq "${v}"`),
  fc.tuple(hostileString, hostileString).map(([a, b]) => `${a} eq ${b}`),
  hostileString,
);

/** Query parameters of a list request (each a raw, unencoded value). */
const startIndex = fc.oneof(fc.integer().map(String), hostileString, fc.constantFrom("1", "5001", "1e3", "0x10"));
const count = fc.oneof(fc.integer().map(String), hostileString, fc.constantFrom("0", "1000", "1001", "-1"));
const cursor = fc.oneof(hostileString, fc.base64String({ maxLength: 80 }), fc.constant(""));
const attributes = fc.oneof(fc.constantFrom("members", "userName,emails", ENTERPRISE_SCHEMA), hostileString);
const excludedAttributes = fc.oneof(fc.constantFrom("members", "groups"), hostileString);

/** Query parameters of a list request (each a raw, unencoded value), in the combinations clients use. */
export const listQuery: fc.Arbitrary<Record<string, string>> = fc.oneof(
  partial({ filter, startIndex, count, attributes }),
  partial({ cursor, count, excludedAttributes }),
  partial({ filter, sortBy: hostileString }),
) as fc.Arbitrary<Record<string, string>>;

/**
 * Percent-encodes every UTF-16 code unit on its own, lone surrogates included (as the 3 bytes they would have in
 * WTF-8), and sometimes leaves a raw `%` or a broken escape: what encodeURIComponent refuses to produce.
 */
export function rawEncode(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (/[A-Za-z0-9_.~-]/.test(text[i] ?? "")) out += text[i];
    else if (unit >= 0xd800 && unit <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        out += encodeURIComponent(text.slice(i, i + 2));
        i++;
      } else {
        out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
          .map((b) => `%${b.toString(16).toUpperCase()}`)
          .join("");
      }
    } else out += encodeURIComponent(text[i] ?? "");
  }
  return out;
}

export const queryString = (query: Record<string, string>): string =>
  Object.entries(query)
    .map(([k, v]) => `${rawEncode(k)}=${rawEncode(v)}`)
    .join("&");

/** A path segment where an id goes: a real one, a UUID of nothing, or anything (raw, possibly bad, encoding). */
export const idSegment = (real: readonly string[]): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: real.length === 0 ? fc.uuid() : fc.constantFrom(...real) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: hostileString.map(rawEncode) },
    fc.constantFrom("%", "%zz", "%00", "%C0%80", "%ED%A0%80", "a".repeat(101), "%2F"),
  );

export const contentType = (...good: string[]): fc.Arbitrary<string | undefined> =>
  fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...good) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        undefined,
        "text/plain",
        "application/scim+json; charset=latin1",
        "application/json;;",
        "multipart/form-data; boundary=x",
        "application/x-www-form-urlencoded",
        "*/*",
        "",
      ),
    },
  );

/** A body as sent: JSON of a generated value, or sometimes bytes that are not JSON. */
export const bodyText = (value: fc.Arbitrary<unknown>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 8, arbitrary: value.map((v) => JSON.stringify(v) ?? "null") },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "",
        "{",
        "[1,",
        "nul",
        '{"a":1}{"b":2}',
        "\u0000",
        '"\\ud800"',
        "1e999",
        "\ufeff{}",
        // Deeper than JSON.stringify can build: 100 000 levels, as text.
        `{"members":${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
        `{"a":${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}}`,
      ),
    },
  );

/** Admin API bodies. */
export const organizationBody = partial({ name: goodOrHostile(edgyString) });

export const scimClientBody = (orgIds: readonly string[]): fc.Arbitrary<unknown> =>
  partial({
    organization_id: goodOrHostile(fc.constantFrom(...orgIds)),
    client_id: goodOrHostile(fc.stringMatching(/^[a-z0-9]{4,20}$/)),
    secret: goodOrHostile(fc.string({ minLength: 16, maxLength: 40 })),
    name: goodOrHostile(edgyString),
    tenant: goodOrHostile(edgyString),
    product: goodOrHostile(fc.constantFrom("okta", "entra", "generic")),
    webhook: goodOrHostile(
      partial({
        url: goodOrHostile(fc.constant("http://127.0.0.1:9/hook")),
        secret: goodOrHostile(fc.string({ minLength: 16, maxLength: 40 })),
      }),
    ),
  });

const keyFields = (orgIds: readonly string[]) =>
  partial({
    organization_id: goodOrHostile(fc.constantFrom(...orgIds)),
    name: goodOrHostile(edgyString),
    actor_id: goodOrHostile(fc.string({ minLength: 1, maxLength: 20 })),
    scopes: goodOrHostile(fc.array(fc.string({ minLength: 1, maxLength: 10 }), { maxLength: 3 })),
    metadata: goodOrHostile(fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 })),
    rate_limits: goodOrHostile(
      fc.array(
        partial({
          name: goodOrHostile(fc.constantFrom("per_minute", "daily")),
          limit: goodOrHostile(fc.integer({ min: 1, max: 100 })),
          period: goodOrHostile(fc.constant("60s")),
        }),
        {
          maxLength: 2,
        },
      ),
    ),
    expire_time: goodOrHostile(fc.constantFrom("2030-01-01T00:00:00Z", "2030-13-01T00:00:00Z", "9999-12-31T23:59:59Z")),
  });

export const issuedKeyBody = keyFields;

export const importBatchBody = (orgIds: readonly string[]): fc.Arbitrary<unknown> =>
  partial({
    requests: goodOrHostile(
      fc.array(
        fc
          .tuple(keyFields(orgIds), partial({ raw_key: goodOrHostile(fc.string({ minLength: 20, maxLength: 40 })) }))
          .map(([fields, key]) => ({ ...fields, ...key })),
        { maxLength: 3 },
      ),
    ),
  });

export const updateMask: fc.Arbitrary<string> = fc.oneof(
  fc.subarray(["name", "scopes", "metadata", "rate_limits", "expire_time", "actor_id"]).map((f) => f.join(",")),
  hostileString,
);

export const keyUpdateBody = (orgIds: readonly string[]): fc.Arbitrary<unknown> =>
  partial({ issued_api_key: goodOrHostile(keyFields(orgIds)) });
