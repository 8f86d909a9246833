/**
 * The warm pool's first fill (decision 230): nothing starts a Durable Object on deploy,
 * so the first request each Worker isolate serves asks the pool to fill itself, in the
 * background. After that, each take refills it and its alarm keeps it.
 */
import { createMiddleware } from "hono/factory";
import { CONTAINER_POOL_NAME, workerConfig } from "../protocol/index.ts";

/** Whether this isolate has asked already: one small call per isolate, not per request. */
let asked = false;

/** Middleware: on an isolate's first request, asks the pool to fill (when there is one). */
export const poolWarmUp = createMiddleware<{ Bindings: Env }>(async (c, next) => {
  const pool = c.env.CONTAINER_POOL;
  if (!asked && pool && workerConfig(c.env).containerPoolSize > 0) {
    asked = true;
    c.executionCtx.waitUntil(
      pool
        .getByName(CONTAINER_POOL_NAME)
        .fill()
        .catch((err: unknown) => console.warn("the warm pool did not start filling:", err)),
    );
  }
  await next();
});
