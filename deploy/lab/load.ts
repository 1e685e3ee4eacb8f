/**
 * The lab's IdP-like load: writers that create, PATCH, PUT and delete users, create and rename groups, and add and
 * remove members, each on resources of its own (so the outcome of every write is known to the writer that made it),
 * and a reader walking the user list with cursors. Every answer is recorded; every write answered 2xx updates the
 * model of what the database must hold and adds the event it must produce. A write whose answer was lost (a 5xx,
 * a timeout) may or may not have happened: its resource is set aside ("tainted") with both possible states, and the
 * event it may have produced is noted as possible, not expected.
 */

export type WriteKind =
  | "user create"
  | "user patch"
  | "user put"
  | "user delete"
  | "group create"
  | "group rename"
  | "member add"
  | "member remove";

export interface WriteRecord {
  readonly writer: number;
  readonly kind: WriteKind;
  readonly start: number;
  readonly end: number;
  /** The HTTP status, or "no answer". */
  readonly status: string;
  readonly ok: boolean;
}

export interface UserState {
  readonly exists: boolean;
  readonly userName: string;
  readonly title: string;
}
export interface TrackedUser {
  readonly id: string;
  acked: UserState;
  /** The state a write whose answer was lost may have left instead; the user is not written again after it. */
  alt?: UserState;
  /** Groups it is a member of (acknowledged). */
  readonly groups: Set<string>;
}
export interface GroupState {
  readonly exists: boolean;
  readonly name: string;
  readonly members: ReadonlySet<string>;
}
export interface TrackedGroup {
  readonly id: string;
  acked: GroupState;
  alt?: GroupState;
  /** Users ever added: a pair is added at most once, so its membership events have one content key each. */
  readonly everAdded: Set<string>;
}

export interface ExpectedEvent {
  /** The event's content key (see contentKey). */
  readonly key: string;
  readonly kind: WriteKind;
  /** When the 2xx arrived: the change was committed before. */
  readonly ackedAt: number;
}

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * What identifies a change in an event, whether it comes from the feed or a webhook: the kind, the resource, and
 * the value the write set (titles and group names are unique in the lab, and a user joins a group at most once).
 */
export function contentKey(event: string, data: Record<string, unknown>): string {
  const id = String(data.id);
  const raw = (data.raw ?? {}) as Record<string, unknown>;
  switch (event) {
    case "user.created":
    case "user.updated":
      return `${event} ${id} ${String(raw.title)}`;
    case "group.created":
    case "group.updated":
      return `${event} ${id} ${String(data.name)}`;
    case "group.user_added":
    case "group.user_removed":
      return `${event} ${String((data.group as { id?: unknown } | undefined)?.id)} ${id}`;
    default:
      return `${event} ${id}`;
  }
}

export class Load {
  readonly writes: WriteRecord[] = [];
  /** Every answer that was not a 2xx, reads included: when it was asked, when it was answered, and what. */
  readonly failures: { start: number; end: number; status: string }[] = [];
  readonly answers = new Map<string, Map<string, number>>();
  readonly users: TrackedUser[] = [];
  readonly groups: TrackedGroup[] = [];
  readonly expected: ExpectedEvent[] = [];
  /** Content keys of events that writes with a lost answer may have produced. */
  readonly possible = new Set<string>();
  /** userNames and group names of creates whose answer was lost: they may exist. */
  readonly unknownUserCreates = new Set<string>();
  readonly unknownGroupCreates = new Set<string>();
  readonly refused: { kind: WriteKind; status: string }[] = [];
  cursorPages = 0;
  cursorErrors = 0;
  phase = "steady";
  #stopping = false;
  #serial = 0;
  #running: Promise<void>[] = [];

  constructor(
    private readonly scim: string,
    private readonly token: string,
    private readonly label: string,
  ) {}

  start(writers: number): void {
    this.#running = [...Array.from({ length: writers }, (_, w) => this.#writer(w)), this.#walker()];
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(this.#running);
  }

  #count(status: string): void {
    const byStatus = this.answers.get(this.phase) ?? new Map<string, number>();
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    this.answers.set(this.phase, byStatus);
  }

  async #call(method: string, path: string, body?: unknown): Promise<{ status: string; json?: unknown }> {
    const start = Date.now();
    const answer = await this.#send(method, path, body);
    const code = Number(answer.status);
    if (!(code >= 200 && code < 300)) this.failures.push({ start, end: Date.now(), status: answer.status });
    return answer;
  }

  async #send(method: string, path: string, body?: unknown): Promise<{ status: string; json?: unknown }> {
    try {
      const res = await fetch(`${this.scim}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.token}`, "content-type": "application/scim+json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await res.text();
      this.#count(String(res.status));
      let json: unknown;
      try {
        json = text === "" ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: String(res.status), json };
    } catch {
      this.#count("no answer");
      return { status: "no answer" };
    }
  }

  /** One write: its record, and whether it was acknowledged (2xx), refused (4xx) or its outcome is unknown. */
  async #write(
    w: number,
    kind: WriteKind,
    method: string,
    path: string,
    body: unknown,
  ): Promise<{ outcome: "ok" | "refused" | "unknown"; json?: unknown; at: number }> {
    const start = Date.now();
    const { status, json } = await this.#call(method, path, body);
    const end = Date.now();
    const code = Number(status);
    const ok = code >= 200 && code < 300;
    this.writes.push({ writer: w, kind, start, end, status, ok });
    if (ok) return { outcome: "ok", json, at: end };
    if (code >= 400 && code < 500) {
      this.refused.push({ kind, status });
      return { outcome: "refused", at: end };
    }
    // An IdP pauses before its next attempt; without a pause a writer would spin on instant errors.
    await new Promise((r) => setTimeout(r, 200));
    return { outcome: "unknown", at: end };
  }

  #expect(key: string, kind: WriteKind, at: number): void {
    this.expected.push({ key, kind, ackedAt: at });
  }

  async #writer(w: number): Promise<void> {
    const mine: TrackedUser[] = [];
    const myGroups: TrackedGroup[] = [];
    const usable = (): TrackedUser[] => mine.filter((u) => u.alt === undefined && u.acked.exists);
    const usableGroups = (): TrackedGroup[] => myGroups.filter((g) => g.alt === undefined);
    while (!this.#stopping) {
      const n = this.#serial++;
      const title = `t${n}`;
      const users = usable();
      const groups = usableGroups();
      const pick = <T>(list: T[]): T | undefined => list[(n * 7919) % Math.max(list.length, 1)];

      if (users.length < 3 || n % 5 === 0) {
        const userName = `${this.label}-w${w}-${n}@lab.test`;
        const r = await this.#write(w, "user create", "POST", "/Users", {
          schemas: [USER],
          userName,
          name: { givenName: "Lab", familyName: `User ${n}` },
          title,
          active: true,
        });
        if (r.outcome === "ok") {
          const id = (r.json as { id: string }).id;
          const user: TrackedUser = { id, acked: { exists: true, userName, title }, groups: new Set() };
          mine.push(user);
          this.users.push(user);
          this.#expect(`user.created ${id} ${title}`, "user create", r.at);
        } else if (r.outcome === "unknown") this.unknownUserCreates.add(userName);
        continue;
      }
      if (groups.length < 2 || (n % 29 === 0 && myGroups.length < 4)) {
        const name = `${this.label}-g${w}-${n}`;
        const r = await this.#write(w, "group create", "POST", "/Groups", { schemas: [GROUP], displayName: name });
        if (r.outcome === "ok") {
          const id = (r.json as { id: string }).id;
          const group: TrackedGroup = { id, acked: { exists: true, name, members: new Set() }, everAdded: new Set() };
          myGroups.push(group);
          this.groups.push(group);
          this.#expect(`group.created ${id} ${name}`, "group create", r.at);
        } else if (r.outcome === "unknown") this.unknownGroupCreates.add(name);
        continue;
      }

      if (n % 4 === 0) {
        // Membership: add a user who never was in the group, or remove one who is.
        const group = pick(groups);
        if (group === undefined) continue;
        const remove = n % 3 === 0 ? pick(users.filter((u) => group.acked.members.has(u.id))) : undefined;
        const add = remove === undefined ? pick(users.filter((u) => !group.everAdded.has(u.id))) : undefined;
        const user = remove ?? add;
        if (user === undefined) continue;
        const members = new Set(group.acked.members);
        if (remove !== undefined) members.delete(user.id);
        else members.add(user.id);
        const kind: WriteKind = remove !== undefined ? "member remove" : "member add";
        const operation =
          remove !== undefined
            ? { op: "remove", path: `members[value eq "${user.id}"]` }
            : { op: "add", path: "members", value: [{ value: user.id }] };
        if (add !== undefined) group.everAdded.add(user.id);
        const r = await this.#write(w, kind, "PATCH", `/Groups/${group.id}`, {
          schemas: [PATCH_OP],
          Operations: [operation],
        });
        const key = `group.${remove !== undefined ? "user_removed" : "user_added"} ${group.id} ${user.id}`;
        const next = { ...group.acked, members };
        if (r.outcome === "ok") {
          group.acked = next;
          if (remove !== undefined) user.groups.delete(group.id);
          else user.groups.add(group.id);
          this.#expect(key, kind, r.at);
        } else if (r.outcome === "unknown") {
          group.alt = next;
          // The user's membership is now unknown too: it is not deleted (which would change the group) from here on.
          user.groups.add(group.id);
          this.possible.add(key);
        }
        continue;
      }
      if (n % 17 === 0) {
        const group = pick(groups);
        if (group === undefined) continue;
        const name = `${this.label}-g${w}-${n}`;
        const r = await this.#write(w, "group rename", "PATCH", `/Groups/${group.id}`, {
          schemas: [PATCH_OP],
          Operations: [{ op: "replace", path: "displayName", value: name }],
        });
        const next = { ...group.acked, name };
        const key = `group.updated ${group.id} ${name}`;
        if (r.outcome === "ok") {
          group.acked = next;
          this.#expect(key, "group rename", r.at);
        } else if (r.outcome === "unknown") {
          group.alt = next;
          this.possible.add(key);
        }
        continue;
      }
      const user = pick(users);
      if (user === undefined) continue;
      if (n % 11 === 0 && user.groups.size === 0) {
        // Only users in no group are deleted: a deletion then changes nothing else.
        const r = await this.#write(w, "user delete", "DELETE", `/Users/${user.id}`, undefined);
        const next = { ...user.acked, exists: false };
        if (r.outcome === "ok") {
          user.acked = next;
          this.#expect(`user.deleted ${user.id}`, "user delete", r.at);
        } else if (r.outcome === "unknown") {
          user.alt = next;
          this.possible.add(`user.deleted ${user.id}`);
        }
        continue;
      }
      const put = n % 3 === 0;
      const r = put
        ? await this.#write(w, "user put", "PUT", `/Users/${user.id}`, {
            schemas: [USER],
            userName: user.acked.userName,
            name: { givenName: "Lab", familyName: "Replaced" },
            title,
            active: true,
          })
        : await this.#write(w, "user patch", "PATCH", `/Users/${user.id}`, {
            schemas: [PATCH_OP],
            Operations: [{ op: "replace", value: { title } }],
          });
      const next = { ...user.acked, title };
      const key = `user.updated ${user.id} ${title}`;
      if (r.outcome === "ok") {
        user.acked = next;
        this.#expect(key, put ? "user put" : "user patch", r.at);
      } else if (r.outcome === "unknown") {
        user.alt = next;
        this.possible.add(key);
      }
    }
  }

  /** Walks the user list with cursors; round robin sends consecutive pages to different instances. */
  async #walker(): Promise<void> {
    while (!this.#stopping) {
      let cursor = "";
      for (let page = 0; page < 20 && !this.#stopping; page++) {
        const res = await this.#call("GET", `/Users?count=10&cursor=${encodeURIComponent(cursor)}`);
        if (res.status === "400") {
          this.cursorErrors++;
          break;
        }
        if (res.status !== "200") {
          // Nothing to walk during an outage: wait as an IdP's reader would, instead of spinning on errors.
          await new Promise((r) => setTimeout(r, 200));
          break;
        }
        this.cursorPages++;
        const next = (res.json as { nextCursor?: string } | undefined)?.nextCursor;
        if (next === undefined) break;
        cursor = next;
      }
    }
  }
}
