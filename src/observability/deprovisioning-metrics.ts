import { Gauge, type Registry } from "prom-client";

/** The deprovisioning guard's gauges, read from PostgreSQL at each scrape (every instance reports the same). */
export function watchDeprovisioningGuard(
  registry: Registry,
  read: () => Promise<{ tripped: number; held: number }>,
): void {
  new Gauge({
    name: "roster_deprovisioning_guard_tripped_connections",
    help: "Connections whose deprovisioning guard has tripped and holds their deactivations and deletions",
    registers: [registry],
    async collect() {
      this.set((await read()).tripped);
    },
  });
  new Gauge({
    name: "roster_deprovisioning_held_events",
    help: "Events held by tripped deprovisioning guards, waiting for an admin's release or discard",
    registers: [registry],
    async collect() {
      this.set((await read()).held);
    },
  });
}
