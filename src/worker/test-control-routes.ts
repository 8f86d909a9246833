/**
 * Test controls (docs/testing.md): what another project's tests may do to a call to see
 * their agent handle it. They exist only where the `TEST_CONTROLS` setting is on (the
 * `toolwire/testing` export turns it on); elsewhere every one of them is an unknown route.
 *
 * - `POST /v1/test/invocations/:id/drop-subscribers`: every WebSocket and SSE subscriber
 *   of the call is cut off as a lost connection would be (`{ dropped }`).
 * - `POST /v1/test/invocations/:id/evict`: the call's Durable Object is thrown away as an
 *   eviction does; the next request rebuilds it from storage (`{ evicted: true }`).
 */
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { apiError, type InvocationTestControls, workerConfig } from "../protocol/index.ts";
import { operatorOnly } from "./auth.ts";
import { errorResponse } from "./errors.ts";
import { invocationStub, unwrap } from "./invocation-stub.ts";
import { invocationIdParam, parseWith } from "./schemas.ts";

type Routes = { Bindings: Env };

export const testControlRoutes = new Hono<Routes>();

/** Off: the same 404 as any route that does not exist, so production shows nothing of them. */
const enabled = createMiddleware<Routes>(async (c, next) => {
  if (!workerConfig(c.env).testControls) {
    return errorResponse(
      apiError("not_found", `no route ${c.req.method} ${c.req.path}; see the README for the API`),
    );
  }
  await next();
});

testControlRoutes.use("*", enabled, operatorOnly);

/** The call's stub, once it is known to exist (404 otherwise). */
async function controlsOf(env: Env, rawId: string): Promise<InvocationTestControls> {
  const id = parseWith(invocationIdParam, rawId, "path.id");
  const stub = invocationStub(env, id);
  unwrap(await stub.view());
  return stub as unknown as InvocationTestControls;
}

testControlRoutes.post("/invocations/:id/drop-subscribers", async (c) => {
  const controls = await controlsOf(c.env, c.req.param("id"));
  return c.json({ dropped: await controls.dropSubscribers() });
});

testControlRoutes.post("/invocations/:id/evict", async (c) => {
  const controls = await controlsOf(c.env, c.req.param("id"));
  try {
    await controls.evict();
  } catch {
    // The object aborts while it answers: the failure is the eviction.
  }
  return c.json({ evicted: true });
});
