import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useId, useRef, useState } from "preact/hooks";
import { AdminApiError } from "./api.js";
import { Link } from "./router.js";

export const messageOf = (e: unknown): string =>
  e instanceof AdminApiError ? e.message : e instanceof Error ? e.message : String(e);

/** Loads data for a view; `reload` fetches again. A newer load wins over an older one still in flight. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const seq = useRef(0);
  const reload = useCallback(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => mine === seq.current && setState({ data, loading: false }),
      (e: unknown) => mine === seq.current && setState({ error: messageOf(e), loading: false }),
    );
  }, deps);
  useEffect(reload, [reload]);
  return { ...state, reload };
}

/**
 * Runs one action of a form or button and keeps its error next to it: cleared when the action is retried and
 * succeeds, so an old error never outlives a later success.
 */
export function useAction() {
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const run = useCallback(async (work: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }, []);
  return { error, busy, run, setError };
}

export function ErrorNote({ error, id }: { error: string | undefined; id?: string }) {
  if (error === undefined) return null;
  return (
    <p class="error" role="alert" id={id}>
      {error}
    </p>
  );
}

const TIME = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  timeZoneName: "short",
});

/** A time in the viewer's zone, with the zone named; the UTC instant in the tooltip and the datetime attribute. */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (iso === null || iso === undefined) return <span>—</span>;
  const d = new Date(iso);
  return (
    <time dateTime={d.toISOString()} title={d.toISOString()}>
      {TIME.format(d)}
    </time>
  );
}

/** A time as one fact of a `<dl>`: its term, then the time. */
export function TimeFact({ term, iso }: { term: string; iso: string | null | undefined }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>
        <Time iso={iso} />
      </dd>
    </>
  );
}

export function CopyButton({ value, label }: { value: string; label: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  return (
    <button
      type="button"
      class="secondary small"
      aria-label={`Copy ${label}`}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(value);
          setState("copied");
        } catch {
          setState("failed");
        }
      }}
    >
      {state === "copied" ? "Copied" : state === "failed" ? "Select and copy" : "Copy"}
    </button>
  );
}

/** A value an admin copies into another console: monospaced, selectable, with a copy button. */
export function CopyField({ label, value, note }: { label: string; value: string; note?: ComponentChildren }) {
  const id = useId();
  return (
    <div class="copy-field">
      <label for={id}>{label}</label>
      <div class="copy-row">
        <input id={id} class="mono" readOnly value={value} onFocus={(e) => e.currentTarget.select()} />
        <CopyButton value={value} label={label} />
      </div>
      {note === undefined ? null : <p class="hint">{note}</p>}
    </div>
  );
}

/** A secret shown once: copy it now, it is not shown again. */
export function OnceSecret({ label, value, children }: { label: string; value: string; children?: ComponentChildren }) {
  return (
    <div class="once" role="status">
      <CopyField label={label} value={value} />
      <p class="hint">
        <strong>Copy it now:</strong> Roster does not show it again. {children}
      </p>
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {children === undefined ? null : <p>{children}</p>}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** Keyset paging: the tokens of the pages before this one are kept, so Previous works too. */
export function usePager() {
  const [stack, setStack] = useState<string[]>([""]);
  const token = stack[stack.length - 1] ?? "";
  return {
    token,
    page: stack.length,
    next: (t: string) => setStack((s) => [...s, t]),
    prev: () => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)),
    reset: () => setStack([""]),
    /** Starts over from another first token (a feed's `now`). */
    restart: (first: string) => setStack([first]),
    /** Swaps this page's token for a later one of the same page (an empty feed page's `next_after`). */
    replace: (t: string) => setStack((s) => [...s.slice(0, -1), t]),
    /** A filter's setter that also goes back to the first page, since the old tokens page another list. */
    resetting:
      <T,>(set: (value: T) => void) =>
      (value: T) => {
        set(value);
        setStack([""]);
      },
  };
}

/** Previous/next for a keyset-paged list; `nextToken` is the last answer's (empty: no next page). */
export function Pager({ pager, nextToken }: { pager: ReturnType<typeof usePager>; nextToken: string | undefined }) {
  const next = nextToken ?? "";
  if (pager.page === 1 && next === "") return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" class="secondary" disabled={pager.page === 1} onClick={pager.prev}>
        Previous
      </button>
      <span>Page {pager.page}</span>
      <button type="button" class="secondary" disabled={next === ""} onClick={() => pager.next(next)}>
        Next
      </button>
    </nav>
  );
}

/**
 * A list's loading note, its error and, once loaded without `items`, its empty state: `empty`, or else an Empty
 * titled `emptyTitle` with the children as its text.
 */
export function ListStatus(props: {
  load: { error?: string | undefined; loading: boolean; data?: unknown };
  what: string;
  items?: readonly unknown[];
  emptyTitle?: string;
  empty?: ComponentChildren;
  children?: ComponentChildren;
}) {
  const empty = props.empty ?? <Empty title={props.emptyTitle ?? ""}>{props.children}</Empty>;
  return (
    <>
      <ErrorNote error={props.load.error} />
      {props.load.loading && props.load.data === undefined ? <Loading what={props.what} /> : null}
      {props.load.data !== undefined && props.items?.length === 0 ? empty : null}
    </>
  );
}

/** Sub-pages as links (real URLs), the current one marked for assistive technology. */
export function Tabs<K extends string>(props: { label: string; current: K; tabs: readonly [K, string, string][] }) {
  return (
    <nav class="tabs" aria-label={props.label}>
      {props.tabs.map(([key, href, text]) => (
        <Link key={key} href={href} aria-current={props.current === key ? "page" : undefined}>
          {text}
        </Link>
      ))}
    </nav>
  );
}

/**
 * The detail pane beside a list: on a narrow screen it sits below the list, so it brings itself (and the keyboard
 * focus) to the reader whenever it shows another item.
 */
export function DetailPane(props: {
  label: string;
  title: string;
  itemKey: string;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus({ preventScroll: true });
    heading.current?.scrollIntoView({ block: "nearest" });
  }, [props.itemKey]);
  return (
    <aside class="card detail" aria-label={props.label}>
      <div class="detail-head">
        <h3 ref={heading} tabIndex={-1}>
          {props.title}
        </h3>
        <button type="button" class="secondary small" onClick={props.onClose}>
          Close
        </button>
      </div>
      {props.children}
    </aside>
  );
}

export function Json({ value, label }: { value: unknown; label: string }) {
  return (
    <figure class="json-figure">
      <figcaption class="sr-only">{label}</figcaption>
      <pre class="json">{JSON.stringify(value, null, 2)}</pre>
    </figure>
  );
}
