// The Worker the conformance suite runs against: the production app, with /mcp also
// serving the suite's fixture tools. The suite sends no Authorization header, so this
// entry adds the configured bearer to /mcp requests that lack one; the production auth
// check still runs on every request.
import { Hono } from "hono";
import { app } from "../../../src/worker/index.ts";
import { mcpRoute, mcpTools } from "../../../src/worker/mcp-route.ts";
import { registerConformanceFixtures } from "./fixtures.ts";
import { TASK_FIXTURES } from "./task-fixtures.ts";

export { InvocationDO } from "../../../durable-objects/invocation/invocation.ts";
export { McpSessionDO } from "../../../durable-objects/mcp-session/mcp-session.ts";
export { RunDO } from "../../../durable-objects/run/run.ts";

const conformanceApp = new Hono<{ Bindings: Env }>();
conformanceApp.route(
  "/mcp",
  mcpRoute(registerConformanceFixtures, () => [...mcpTools(), ...TASK_FIXTURES]),
);
conformanceApp.route("/", app);

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/mcp" && !request.headers.has("Authorization") && env.API_TOKEN) {
      const headers = new Headers(request.headers);
      headers.set("Authorization", `Bearer ${env.API_TOKEN}`);
      return conformanceApp.fetch(new Request(request, { headers }), env, ctx);
    }
    return conformanceApp.fetch(request, env, ctx);
  },
};
