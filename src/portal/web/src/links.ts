import { createContext } from "preact";
import { useContext } from "preact/hooks";
import { enc } from "./api.js";

/**
 * Where the shared pages link to. The admin portal links a connection to its settings and a user to its detail
 * page; a setup link's view has neither, so a link it lacks is left out rather than shown and refused.
 */
export interface PortalLinks {
  /** The root a breadcrumb and "back" lead to. */
  readonly home: string;
  readonly connection: (clientId: string) => string;
  readonly requests: (clientId: string) => string;
  readonly settings?: (clientId: string) => string;
  readonly events?: (clientId: string) => string;
  readonly user?: (orgId: string, id: string) => string;
  readonly group?: (orgId: string, id: string) => string;
}

export const ADMIN_LINKS: PortalLinks = {
  home: "/organizations",
  connection: (c) => `/connections/${enc(c)}`,
  requests: (c) => `/connections/${enc(c)}/requests`,
  settings: (c) => `/connections/${enc(c)}/settings`,
  events: (c) => `/connections/${enc(c)}/events`,
  user: (o, id) => `/organizations/${enc(o)}/users/${enc(id)}`,
  group: (o, id) => `/organizations/${enc(o)}/groups/${enc(id)}`,
};

/**
 * The setup view's pages. `/portal/setup/<token>` is the link itself (exchanged by the server), so a connection's
 * pages sit two segments further down, where no token can be.
 */
export const SETUP_LINKS: PortalLinks = {
  home: "/setup",
  connection: (c) => `/setup/connections/${enc(c)}`,
  requests: (c) => `/setup/connections/${enc(c)}/requests`,
};

export const LinksContext = createContext<PortalLinks>(ADMIN_LINKS);
export const useLinks = (): PortalLinks => useContext(LinksContext);
