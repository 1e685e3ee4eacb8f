import type { ComponentChildren, JSX } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { useLinks } from "./links.js";
import { Link, match } from "./router.js";

/** A view's pages by URL pattern below /portal; the first match wins. */
export type RouteTable = readonly (readonly [string, (p: Record<string, string>) => JSX.Element])[];

export function Routes({ routes, path }: { routes: RouteTable; path: string }) {
  for (const [pattern, page] of routes) {
    const params = match(pattern, path);
    if (params !== null) return page(params);
  }
  return <NotFound />;
}

function NotFound() {
  const home = useLinks().home;
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        This address names no page of the portal. <Link href={home}>Go back to the start</Link>.
      </p>
    </section>
  );
}

/** The skip link, the top bar and the main landmark every signed-in view shares. */
export function Frame({
  path,
  header,
  children,
}: {
  path: string;
  header: ComponentChildren;
  children: ComponentChildren;
}) {
  // After an in-page navigation, focus moves to the new content, as a page load would reset it for a screen reader.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById("main")?.focus({ preventScroll: true });
  }, [path]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">{header}</header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
