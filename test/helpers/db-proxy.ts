import { createServer, type Server, type Socket, connect } from "node:net";

/**
 * A TCP proxy in front of PostgreSQL that a test controls, to play the network's faults without touching the
 * server: `refuse()` closes the port and resets every open connection (ECONNREFUSED, ECONNRESET), `blackhole()`
 * stops every byte both ways on open and new connections alike (a partition: nothing answers, nothing fails),
 * `pass()` heals either; connections caught in a black hole are reset when it ends.
 */
export interface DbProxy {
  readonly port: number;
  pass(): Promise<void>;
  refuse(): Promise<void>;
  blackhole(): void;
  close(): Promise<void>;
}

type Mode = "pass" | "blackhole" | "refuse";

/** `target`: where PostgreSQL listens, a host and port or a Unix socket path. */
export async function startDbProxy(target: { host: string; port: number } | { path: string }): Promise<DbProxy> {
  let mode: Mode = "pass";
  const pairs = new Set<[Socket, Socket]>();
  const server: Server = createServer((downstream) => {
    const upstream = connect(target);
    const pair: [Socket, Socket] = [downstream, upstream];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      downstream.destroy();
      upstream.destroy();
    };
    for (const [from, to] of [pair, [upstream, downstream] as const]) {
      from.on("data", (chunk) => to.write(chunk));
      from.on("error", end);
      from.on("close", end);
    }
    if (mode === "blackhole") for (const s of pair) s.pause();
  });
  await listen(server, 0);
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;

  return {
    port,
    async pass() {
      if (mode === "refuse") await listen(server, port);
      // A black hole ends as a long partition does, once TCP has given up: its connections are gone (their held
      // bytes — a statement whose client stopped waiting — are never delivered late).
      if (mode === "blackhole") {
        for (const [downstream, upstream] of pairs) cut(downstream, upstream);
        pairs.clear();
      }
      mode = "pass";
    },
    async refuse() {
      if (mode === "refuse") return;
      mode = "refuse";
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const [downstream, upstream] of pairs) cut(downstream, upstream);
      pairs.clear();
      await closed;
    },
    blackhole() {
      mode = "blackhole";
      for (const pair of pairs) for (const s of pair) s.pause();
    },
    async close() {
      for (const pair of pairs) for (const s of pair) s.destroy();
      pairs.clear();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Resets the client's side (ECONNRESET) and drops the server's. */
function cut(downstream: Socket, upstream: Socket): void {
  downstream.resetAndDestroy();
  upstream.destroy();
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.removeListener("error", reject);
      resolve();
    });
  });
}
