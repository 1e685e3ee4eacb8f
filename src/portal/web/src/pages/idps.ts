/**
 * What each identity provider's console asks for when it is pointed at a SCIM server, field by field, in the
 * console's own words. `value` says what to enter: the connection's base URL, its secret, or a literal.
 */
export type GuideValue =
  | { kind: "baseUrl" }
  | { kind: "secret" }
  | { kind: "clientId" }
  | { kind: "tokenUrl" }
  | { kind: "literal"; text: string };

export interface GuideField {
  readonly label: string;
  readonly value: GuideValue;
  readonly note?: string;
  /** A field of the default authentication, replaced by an alternative's fields when one is chosen. */
  readonly auth?: true;
}

/** Another way the console can authenticate, in its own words, and the connection's method it needs. */
export interface AuthAlternative {
  readonly label: string;
  readonly method: "basic" | "client_credentials";
  readonly fields: readonly GuideField[];
}

export interface Idp {
  readonly name: string;
  /** Where in the console the fields are. */
  readonly where: readonly string[];
  readonly fields: readonly GuideField[];
  /** The console's name for the default authentication, when it offers others. */
  readonly defaultAuth?: string;
  readonly alternatives?: readonly AuthAlternative[];
  /** What to do after the fields, and what to know about this provider. */
  readonly after: readonly string[];
}

const baseUrl: GuideValue = { kind: "baseUrl" };
const secret: GuideValue = { kind: "secret" };
const clientId: GuideValue = { kind: "clientId" };
const tokenUrl: GuideValue = { kind: "tokenUrl" };
const lit = (text: string): GuideValue => ({ kind: "literal", text });

/** The console's two fields of a bearer connection, by their names there. */
const urlAndToken = (url: string, token: string): GuideField[] => [
  { label: url, value: baseUrl },
  { label: token, value: secret },
];
/** The field that names userName as the unique identifier, and what to know about it in that console. */
const userNameField = (label: string, note: string): GuideField => ({ label, value: lit("userName"), note });

const oauthFields = (method: string, id: string, idSecret: string): GuideField[] => [
  { label: method, value: lit("OAuth2 client credentials grant") },
  { label: "Token Endpoint", value: tokenUrl },
  { label: id, value: clientId },
  { label: idSecret, value: secret, note: "Tokens last an hour; the identity provider fetches new ones itself." },
];

export const IDPS = {
  okta: {
    name: "Okta",
    where: [
      "Admin Console → Applications → Applications → Create App Integration (SAML 2.0 or SWA), or open your existing app.",
      "General → App Settings → Edit → Provisioning: choose SCIM, Save.",
      "Provisioning → Integration → Edit, and fill in:",
    ],
    fields: [
      { label: "SCIM connector base URL", value: baseUrl },
      { label: "Unique identifier field for users", value: lit("userName") },
      {
        label: "Supported provisioning actions",
        value: lit("Push New Users, Push Profile Updates, Push Groups"),
        note: "Tick these three; Import New Users and Profile Updates is optional.",
      },
      { label: "Authentication Mode", value: lit("HTTP Header"), auth: true },
      {
        label: "Authorization (Bearer)",
        value: secret,
        note: "Paste the secret alone: Okta adds the Bearer prefix.",
        auth: true,
      },
    ],
    defaultAuth: "HTTP Header",
    alternatives: [
      {
        label: "Basic Auth",
        method: "basic",
        fields: [
          { label: "Authentication Mode", value: lit("Basic Auth") },
          { label: "Username", value: clientId },
          { label: "Password", value: secret },
        ],
      },
    ],
    after: [
      "Test Connector Configuration, then Save.",
      "Provisioning → To App → Edit: enable Create Users, Update User Attributes and Deactivate Users.",
      "Assign people (Assignments) and push groups (Push Groups → by name). Okta deactivates users instead of deleting them.",
    ],
  },
  entra: {
    name: "Microsoft Entra ID",
    where: [
      "Entra admin center → Enterprise applications → New application → Create your own application → Integrate any other application you don't find in the gallery (Non-gallery).",
      "Provisioning → Get started (or New configuration) → Provisioning Mode: Automatic → Admin Credentials:",
    ],
    fields: [
      { label: "Tenant URL", value: baseUrl },
      { label: "Authentication Method", value: lit("Bearer authentication"), auth: true },
      { label: "Secret Token", value: secret, note: "Without a Bearer prefix: Entra adds it.", auth: true },
      userNameField(
        "Mappings → Provision Microsoft Entra ID Users → matching attribute",
        "Keep userName ← userPrincipalName with “Match objects using this attribute” set to Yes.",
      ),
    ],
    defaultAuth: "Bearer authentication",
    alternatives: [
      {
        label: "OAuth2 client credentials grant",
        method: "client_credentials",
        fields: oauthFields("Authentication Method", "Client Identifier", "Client Secret"),
      },
    ],
    after: [
      "Test Connection (Entra looks up a random userName and expects an empty list), then Save.",
      "Users and groups: assign who is in scope, then set Provisioning Status to On. Entra syncs every 20 to 40 minutes; “Provision on demand” pushes one user now.",
      'Roster accepts Entra\'s non-standard PATCH forms ("False" as a string, Remove with a members value) without the aadOptscim062020 flag.',
    ],
  },
  google: {
    name: "Google Workspace",
    where: [
      "Google Workspace sends SCIM only to apps of its catalogue that support automatic provisioning; a custom SAML app has no SCIM fields.",
      "Admin console → Apps → Web and mobile apps → Add app → Search for apps: pick a catalogue app whose auto-provisioning accepts a custom endpoint, then Auto-provisioning → Configure:",
    ],
    fields: [
      ...urlAndToken("Endpoint URL (SCIM base URL)", "Access token"),
      userNameField("Unique identifier field for users", "Google sends the primary email as userName."),
    ],
    after: [
      "Turn auto-provisioning on for the organizational units to sync.",
      "Google does not send group memberships over SCIM: expect users only.",
    ],
  },
  onelogin: {
    name: "OneLogin",
    where: [
      "Administration → Applications → Add App → “SCIM Provisioner with SAML (SCIM v2 Enterprise)”, Save.",
      "Configuration tab → API Connection:",
    ],
    fields: [
      ...urlAndToken("SCIM Base URL", "SCIM Bearer Token"),
      userNameField(
        "SCIM JSON Template",
        "Keep the template's userName mapped to the user's email or username: it is the unique identifier.",
      ),
    ],
    after: [
      "Enable the API connection, then Provisioning tab → Enable provisioning, Save.",
      "Groups come from Rules or Roles and “Refresh entitlements”; OneLogin sends no event when a group is deleted.",
    ],
  },
  jumpcloud: {
    name: "JumpCloud",
    where: ["SSO Applications → your SAML application → Identity Management tab:"],
    fields: [
      { label: "API Type", value: lit("SCIM API") },
      { label: "SCIM Version", value: lit("SCIM 2.0") },
      { label: "Base URL", value: baseUrl },
      { label: "Token Key", value: secret },
      {
        label: "Test User Email",
        value: lit("any address of your domain"),
        note: "Test connection creates and deletes a test user and group.",
      },
    ],
    after: [
      "Test Connection, enable Group Management if you sync groups, Activate, then bind user groups to the application.",
    ],
  },
  generic: {
    name: "Other SCIM 2.0 client",
    where: ["Any SCIM 2.0 client (Rippling, SailPoint, a script) needs:"],
    fields: [
      { label: "SCIM base URL", value: baseUrl },
      {
        label: "Authorization header",
        value: secret,
        note: "Sent as “Authorization: Bearer <secret>”.",
        auth: true,
      },
      { label: "Unique identifier field for users", value: lit("userName") },
    ],
    defaultAuth: "Bearer token",
    alternatives: [
      {
        label: "HTTP Basic",
        method: "basic",
        fields: [
          { label: "User name", value: clientId },
          { label: "Password", value: secret },
        ],
      },
      {
        label: "OAuth 2.0 client credentials",
        method: "client_credentials",
        fields: oauthFields("Grant type", "Client ID", "Client secret"),
      },
    ],
    after: [
      "Supported: /Users and /Groups with POST, GET, PUT, PATCH, DELETE, and .search; the whole RFC 7644 filter grammar on every filterable attribute, sortBy/sortOrder, ETags; cursor or index paging.",
      "Discovery: /ServiceProviderConfig, /Schemas and /ResourceTypes.",
    ],
  },
} satisfies Record<string, Idp>;

export type IdpKey = keyof typeof IDPS;

export const isIdpKey = (v: string | null): v is IdpKey => v !== null && Object.hasOwn(IDPS, v);

/** The identity providers as a drop-down's choices. */
export const IDP_OPTIONS = (Object.keys(IDPS) as IdpKey[]).map((key) => [key, IDPS[key].name] as const);
