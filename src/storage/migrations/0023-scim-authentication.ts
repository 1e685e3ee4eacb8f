import { type Kysely, sql } from "kysely";

/**
 * How a SCIM client may authenticate (docs/scim-authentication.md):
 *
 * - `auth_methods`: which of `bearer` (the secret itself in `Authorization`), `basic` (HTTP Basic with the client id
 *   and the secret) and `client_credentials` (OAuth 2.0 tokens issued for the secret) the connection accepts. All three
 *   prove knowledge of the same secret. A connection accepts bearer and client credentials unless an operator
 *   chooses otherwise; Basic is turned on where an IdP is configured for it (its ServiceProviderConfig then lists a
 *   second scheme).
 * - `spc_pagination`: whether the ServiceProviderConfig carries the RFC 9865 `pagination` block; some SCIM client
 *   libraries refuse a ServiceProviderConfig with keys they do not know.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table scim_clients
      add column auth_methods text[] not null default '{bearer,client_credentials}',
      add column spc_pagination boolean not null default true,
      add constraint scim_clients_auth_methods_check
        check (auth_methods <@ '{bearer,basic,client_credentials}'::text[] and cardinality(auth_methods) > 0)
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table scim_clients drop constraint scim_clients_auth_methods_check, drop column auth_methods,
      drop column spc_pagination
  `.execute(db);
}
