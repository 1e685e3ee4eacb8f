import type { ScimClient } from "../../directory/scim-clients/types.js";
import type { AccessTokenCodec, SecretUsed } from "./access-tokens.js";
import { looksLikeAccessToken, type Presented } from "./credentials.js";

/** The domain's check of a presented secret against a client's live secrets (constant time). */
export type SecretMatch = (client: ScimClient, presented: string) => SecretUsed | undefined;

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
  const accepts = (m: ScimClient["authMethods"][number]) => client.authMethods.includes(m);
  if (presented.kind === "basic") {
    if (accepts("basic") && presented.user === client.clientId) {
      const which = match(client, presented.password);
      if (which !== undefined) return which;
    }
    // A static secret that happens to read as a Basic header is still a bearer value.
    return accepts("bearer") ? match(client, presented.bare) : undefined;
  }
  if (accepts("client_credentials") && looksLikeAccessToken(presented.value)) {
    const which = await tokens.verify(presented.value, client);
    if (which !== undefined) return which;
  }
  return accepts("bearer") ? match(client, presented.value) : undefined;
}
