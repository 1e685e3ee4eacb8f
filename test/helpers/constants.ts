/**
 * The values every test shares: credentials of the test apps and child processes, and the SCIM URNs. Written out
 * here rather than imported from `src/`, so a test notices when the service's own constant changes.
 */

/** The admin token of every test app and every Roster child process. */
export const ADMIN_TOKEN = "test-admin-token-0123456789";
/** The public URL in-process test apps answer as (Location headers, meta.location). */
export const PUBLIC_URL = "http://roster.test";

/**
 * ROSTER_WEBHOOK_URL_ALLOW of every test app: its webhook receivers listen on loopback, which the outbound guard
 * refuses unless listed (the default stays closed; tests of the guard itself build apps without it).
 */
export const LOOPBACK_WEBHOOK_ALLOW: readonly string[] = ["127.0.0.1", "::1"];

/** The key that seals secrets at rest, as ROSTER_SECRETS spells it for a child process. */
export const ROSTER_SECRETS = "test-secret-key-test-secret-key-0123456789";
/** The same key ring as the in-process app takes it. */
export const TEST_SECRETS: readonly Buffer[] = [Buffer.from(ROSTER_SECRETS)];

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const ENTERPRISE_SCHEMA = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
export const LIST_RESPONSE = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";
export const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

/** The webhook signing secret, tenant and product of the SCIM client a test app with a receiver seeds. */
export const WEBHOOK_SECRET = "whsec_e2e_0123456789abcdef";
export const TENANT = "acme-tenant";
export const PRODUCT = "crm";
