/**
 * The `/v1/sandboxes/:id/ports` routes (decision 182): expose a port of a created
 * sandbox as a preview URL, list the exposed ones, revoke one. The URL is the capability:
 * a signed token for one port of one sandbox until `expiresAt`, in two forms, the host
 * form for browsers and the path form for clients (docs/sandboxes.md#preview-urls).
 */
import { type Context, Hono } from "hono";
import { z } from "zod";
import { CREATED_SANDBOX_ID } from "../execenv/index.ts";
import { workerConfig } from "../protocol/index.ts";
import {
  type PortExposure,
  type PortGrant,
  PREVIEW_DEFAULT_SECONDS,
  PREVIEW_MAX_PORT,
  PREVIEW_MAX_SECONDS,
  PREVIEW_MIN_PORT,
  previewUrls,
  type SandboxPortsApi,
} from "../protocol/preview.ts";
import { mintPreviewToken } from "../protocol/preview-token.ts";
import {
  anyAgent,
  principalOf,
  refuseSandboxToken,
  sandboxScope,
  subscribeSecret,
} from "./auth.ts";
import { readJsonBody } from "./body.ts";
import { unwrap } from "./invocation-stub.ts";
import { noStore } from "./no-store.ts";
import { parseWith } from "./schemas.ts";

const port = z.number().int().min(PREVIEW_MIN_PORT).max(PREVIEW_MAX_PORT);
const exposeBody = z.strictObject({
  port,
  expiresInSeconds: z.number().int().min(1).max(PREVIEW_MAX_SECONDS).optional(),
});
const sandboxIdParam = z
  .string()
  .regex(CREATED_SANDBOX_ID, "must be a sandbox id, sbx_<host>_<20 hex digits>");
const portParam = z.coerce.number().pipe(port);

/** The Sandbox DO of `id`, as its preview methods. */
export function sandboxPorts(env: Env, id: string): SandboxPortsApi {
  return env.SANDBOX_RECORDS.getByName(id) as unknown as SandboxPortsApi;
}

/**
 * The two URLs of a grant. The host form is `<token>.<PREVIEW_DOMAIN>` over https when
 * that is set, else `<token>.localhost` on the request's own port (every browser sends
 * `*.localhost` to loopback); the path form is on the request's own origin.
 * @example await exposureOf(env, "http://127.0.0.1:8787/v1/…", id, grant)
 */
async function exposureOf(
  env: Env,
  requestUrl: string,
  sandboxId: string,
  grant: PortGrant,
): Promise<PortExposure> {
  const token = await mintPreviewToken(subscribeSecret(env), { sandboxId, ...grant });
  return {
    port: grant.port,
    ...previewUrls(token, requestUrl, workerConfig(env).previewDomain),
    expiresAt: new Date(grant.expiresAt * 1000).toISOString(),
  };
}

export const previewRoutes = new Hono<{ Bindings: Env }>();
previewRoutes.use("*", noStore);

/**
 * The route's sandbox id, after `anyAgent`: the operator's token opens every sandbox's
 * ports, a sandbox's token its own (another id is a 403), as its other routes do.
 */
function ownId(c: Context<{ Bindings: Env }>): string {
  const id = parseWith(sandboxIdParam, c.req.param("id"), "path.id");
  const scope = sandboxScope(principalOf(c));
  if (scope !== null && scope !== id) refuseSandboxToken(scope);
  return id;
}

previewRoutes.post("/:id/ports", anyAgent, async (c) => {
  const id = ownId(c);
  const body = parseWith(exposeBody, await readJsonBody(c.req.raw), "body");
  const seconds = body.expiresInSeconds ?? PREVIEW_DEFAULT_SECONDS;
  const grant = unwrap(await sandboxPorts(c.env, id).expose(body.port, seconds));
  return c.json(await exposureOf(c.env, c.req.url, id, grant), 201);
});

previewRoutes.get("/:id/ports", anyAgent, async (c) => {
  const id = ownId(c);
  const grants = unwrap(await sandboxPorts(c.env, id).ports());
  const ports = await Promise.all(grants.map((g) => exposureOf(c.env, c.req.url, id, g)));
  return c.json({ ports });
});

previewRoutes.delete("/:id/ports/:port", anyAgent, async (c) => {
  const id = ownId(c);
  const revoked = unwrap(
    await sandboxPorts(c.env, id).unexpose(parseWith(portParam, c.req.param("port"), "path.port")),
  );
  return c.json({ port: revoked.port, revoked: true });
});
