import type { ScimClient } from "../../directory/scim-clients/types.js";
import type { AccessTokenCodec, SecretUsed } from "./access-tokens.js";
import { looksLikeAccessToken, type Presented } from "./credentials.js";

/** The domain's check of a presented secret against a client's live secrets (constant time). */
export type SecretMatch = (client: ScimClient, presented: string) => SecretUsed | undefined;

const accepts = (client: ScimClient, method: ScimClient["authMethods"][number]): boolean =>
  client.authMethods.includes(method);

/** authenticateAtOnce's answer when the presented value must first be verified as an access token. */
export const VERIFY_TOKEN = Symbol("verify the access token");

/**
 * authenticate's answer where it needs nothing awaited — every static secret, by bearer or Basic —, else
 * VERIFY_TOKEN: the value looks like an access token and the client accepts them.
 */
export function authenticateAtOnce(
  client: ScimClient,
  presented: Presented,
  match: SecretMatch,
): SecretUsed | undefined | typeof VERIFY_TOKEN {
  if (presented.kind === "basic") {
    if (accepts(client, "basic") && presented.user === client.clientId) {
      const which = match(client, presented.password);
      if (which !== undefined) return which;
    }
    // A static secret that happens to read as a Basic header is still a bearer value.
    return accepts(client, "bearer") ? match(client, presented.bare) : undefined;
  }
  if (accepts(client, "client_credentials") && looksLikeAccessToken(presented.value)) return VERIFY_TOKEN;
  return accepts(client, "bearer") ? match(client, presented.value) : undefined;
}

/**
 * Which of the client's secrets the presented credentials prove, by the methods the client accepts
 * (docs/scim-authentication.md): an access token it issued, the secret as a bearer value, or Basic with the client
 * id as user name and the secret as password.
 */
export async function authenticate(
  client: ScimClient,
  presented: Presented,
  match: SecretMatch,
  tokens: AccessTokenCodec,
): Promise<SecretUsed | undefined> {
  const now = authenticateAtOnce(client, presented, match);
  if (now !== VERIFY_TOKEN) return now;
  // Only a bearer value is ever taken for an access token.
  if (presented.kind !== "bearer") return undefined;
  const which = await tokens.verify(presented.value, client);
  if (which !== undefined) return which;
  return accepts(client, "bearer") ? match(client, presented.value) : undefined;
}
