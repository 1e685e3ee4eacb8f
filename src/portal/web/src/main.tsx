import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { setUnauthenticatedHandler, token } from "./api.js";
import { Frame, type RouteTable, Routes } from "./frame.js";
import { AdminTokensPage } from "./pages/admin-tokens.js";
import { ApiKeysPage } from "./pages/api-keys.js";
import { ConnectionPage } from "./pages/connection.js";
import { GroupDetail, UserDetail } from "./pages/directory-detail.js";
import { OrganizationPage } from "./pages/organization.js";
import { OrganizationsPage } from "./pages/organizations.js";
import { isSetupPath, SetupApp } from "./pages/setup.js";
import { SignInPage } from "./pages/sign-in.js";
import { Link, type Location, navigate, useLocation } from "./router.js";

/** The admin portal's pages by URL pattern below /portal; the first match wins. */
const ROUTES: RouteTable = [
  ["/", () => <OrganizationsPage />],
  ["/organizations", () => <OrganizationsPage />],
  ["/organizations/:org", (p) => <OrganizationPage orgId={p.org ?? ""} tab="connections" />],
  ["/organizations/:org/users", (p) => <OrganizationPage orgId={p.org ?? ""} tab="users" />],
  ["/organizations/:org/groups", (p) => <OrganizationPage orgId={p.org ?? ""} tab="groups" />],
  ["/organizations/:org/events", (p) => <OrganizationPage orgId={p.org ?? ""} tab="events" />],
  ["/organizations/:org/setup-links", (p) => <OrganizationPage orgId={p.org ?? ""} tab="setup-links" />],
  ["/organizations/:org/users/:id", (p) => <UserDetail orgId={p.org ?? ""} id={p.id ?? ""} />],
  ["/organizations/:org/groups/:id", (p) => <GroupDetail orgId={p.org ?? ""} id={p.id ?? ""} />],
  ["/connections/:client", (p) => <ConnectionPage clientId={p.client ?? ""} tab="setup" />],
  ["/connections/:client/settings", (p) => <ConnectionPage clientId={p.client ?? ""} tab="settings" />],
  ["/connections/:client/events", (p) => <ConnectionPage clientId={p.client ?? ""} tab="events" />],
  ["/connections/:client/requests", (p) => <ConnectionPage clientId={p.client ?? ""} tab="requests" />],
  ["/connections/:client/mapping", (p) => <ConnectionPage clientId={p.client ?? ""} tab="mapping" />],
  ["/api-keys", () => <ApiKeysPage tab="issued" />],
  ["/api-keys/imported", () => <ApiKeysPage tab="imported" />],
  ["/admin-tokens", () => <AdminTokensPage />],
];

/** The operator's portal, signed in with an admin token. */
function AdminApp({ loc }: { loc: Location }) {
  const [signedIn, setSignedIn] = useState(token.get() !== null);
  useEffect(() => {
    setUnauthenticatedHandler(() => {
      token.clear();
      setSignedIn(false);
    });
  }, []);
  useEffect(() => {
    if (!signedIn && loc.path !== "/sign-in") navigate(`/sign-in${next(loc.path)}`, true);
  }, [signedIn, loc.path]);

  if (!signedIn || loc.path === "/sign-in") {
    return (
      <SignInPage
        onSignedIn={() => {
          setSignedIn(true);
          const back = loc.query.get("next");
          navigate(back?.startsWith("/") && !back.startsWith("//") ? back : "/organizations", true);
        }}
      />
    );
  }
  const section = loc.path.startsWith("/api-keys") ? "keys" : loc.path.startsWith("/admin-tokens") ? "tokens" : "orgs";
  const header = (
    <>
      <Link href="/organizations" class="brand">
        Roster
      </Link>
      <nav aria-label="Main">
        <Link href="/organizations" aria-current={section === "orgs" ? "page" : undefined}>
          Organizations
        </Link>
        <Link href="/api-keys" aria-current={section === "keys" ? "page" : undefined}>
          API keys
        </Link>
        <Link href="/admin-tokens" aria-current={section === "tokens" ? "page" : undefined}>
          Admin tokens
        </Link>
      </nav>
      <button
        type="button"
        class="secondary small"
        onClick={() => {
          token.clear();
          setSignedIn(false);
          navigate("/sign-in", true);
        }}
      >
        Sign out
      </button>
    </>
  );
  return (
    <Frame path={loc.path} header={header}>
      <Routes routes={ROUTES} path={loc.path} />
    </Frame>
  );
}

/** A setup link's view (its own session, no admin token) or the admin portal, by the address. */
function App() {
  const loc = useLocation();
  return isSetupPath(loc.path) ? <SetupApp loc={loc} /> : <AdminApp loc={loc} />;
}

const next = (path: string) => (path === "/" || path === "/sign-in" ? "" : `?next=${encodeURIComponent(path)}`);

const root = document.getElementById("app");
if (root !== null) {
  root.textContent = "";
  render(<App />, root);
}
