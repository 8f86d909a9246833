import { Hono } from "hono";

export { InvocationDO } from "../durable-objects/invocation.ts";

const app = new Hono<{ Bindings: Env }>();
app.get("/healthz", (c) => c.json({ ok: true }));

export default app;
