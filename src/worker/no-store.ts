/**
 * `Cache-Control: no-store` on every answer that carries invocation state or a token,
 * so no proxy or browser cache keeps one (many are reached with a `?token=` URL).
 */
import type { MiddlewareHandler } from "hono";

/**
 * Marks the route's answer `no-store` unless it already says how to cache.
 * @example invocationRoutes.use("*", noStore)
 */
export const noStore: MiddlewareHandler = async (c, next) => {
  await next();
  // A WebSocket upgrade (101) carries no body to cache, and its headers are the runtime's.
  if (c.res.status === 101 || c.res.headers.has("Cache-Control")) return;
  const res = new Response(c.res.body, c.res);
  res.headers.set("Cache-Control", "no-store");
  c.res = res;
};
