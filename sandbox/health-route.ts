/** `GET /healthz`: open (no token), so a load balancer or the Worker can tell the host is up. */
import { Hono } from "hono";

/**
 * The health route, mounted before the host's auth.
 * @example app.route("/", healthRoute());
 */
export function healthRoute(): Hono {
  const app = new Hono();
  app.get("/healthz", (c) => c.json({ ok: true }));
  return app;
}
