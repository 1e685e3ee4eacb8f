import type { ComponentChildren, JSX } from "preact";
import { useEffect, useState } from "preact/hooks";

/** Client-side routes are real URLs below /portal/; the server answers every one of them with index.html. */
export const BASE = "/portal";

const listeners = new Set<() => void>();
const notify = () => {
  for (const l of listeners) l();
};
window.addEventListener("popstate", notify);

export function navigate(path: string, replace = false): void {
  const url = `${BASE}${path}`;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  window.scrollTo(0, 0);
  notify();
}

export interface Location {
  /** The path below /portal, always starting with `/`. */
  readonly path: string;
  readonly query: URLSearchParams;
}

const current = (): Location => {
  const raw = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : "/";
  return { path: raw === "" ? "/" : raw, query: new URLSearchParams(location.search) };
};

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    listeners.add(update);
    // A child's effect runs before this one and may have navigated already (a redirect to sign-in): catch up.
    const now = current();
    if (now.path !== loc.path || now.query.toString() !== loc.query.toString()) setLoc(now);
    return () => {
      listeners.delete(update);
    };
  }, []);
  return loc;
}

/** Matches `/organizations/:id` against a path; the parameters decoded. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split("/").filter(Boolean);
  const s = path.split("/").filter(Boolean);
  if (p.length !== s.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const part = p[i] ?? "";
    const seg = s[i] ?? "";
    if (part.startsWith(":")) params[part.slice(1)] = decodeURIComponent(seg);
    else if (part !== seg) return null;
  }
  return params;
}

type LinkProps = { href: string; children: ComponentChildren } & Omit<JSX.HTMLAttributes<HTMLAnchorElement>, "href">;

/** An ordinary link (open in a new tab works) that navigates in place on a plain click. */
export function Link({ href, children, ...rest }: LinkProps) {
  return (
    <a
      {...rest}
      href={`${BASE}${href}`}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}
