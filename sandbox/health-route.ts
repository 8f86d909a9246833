/**
 * `GET /healthz`: open (no token), so a load balancer or the Worker can tell the host is
 * up; it says how busy the commands are, which the Worker admits calls by (decision 248).
 */
import { Hono } from "hono";
import type { ExecLoad } from "../src/protocol/index.ts";

/** What `/healthz` reports the load of. */
interface LoadSource {
  load(): ExecLoad;
}

/**
 * The health route, mounted before the host's auth.
 * @example app.route("/", healthRoute(gate));
 */
export function healthRoute(execs: LoadSource): Hono {
  const app = new Hono();
  app.get("/healthz", (c) => c.json({ ok: true, execs: execs.load() }));
  return app;
}
