/**
 * The `/v1/sandboxes` routes: create, list, read, keep alive and delete created
 * sandboxes, their files in and out as tar, and their tokens (docs/sandboxes.md). Each
 * sandbox's record is its Sandbox DO; its files stream straight between the caller and
 * its host. The operator's token reaches every route; a sandbox's own token (decision
 * 250) reads, keeps alive and moves the files of that sandbox only.
 */
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { CREATED_SANDBOX_ID, placementOf } from "../execenv/index.ts";
import { hostCall, hostFetch } from "../execenv/sandbox-host-api.ts";
import {
  CONTAINER_POOL_NAME,
  type ExecLoad,
  newTokenNonce,
  type SandboxView,
} from "../protocol/index.ts";
import { checkNetworkPolicy, type NetworkPolicy } from "../protocol/network-policy.ts";
import { anyAgent, operatorOnly, principalOf, refuseSandboxToken, sandboxScope } from "./auth.ts";
import { readJsonBody } from "./body.ts";
import { raise } from "./errors.ts";
import { initialPathProblem, ustarOf } from "./initial-files.ts";
import { unwrap } from "./invocation-stub.ts";
import { makeSandbox } from "./new-sandbox.ts";
import { noStore } from "./no-store.ts";
import { sandboxStub } from "./sandbox-stub.ts";
import { sandboxTokenFor } from "./sandbox-token.ts";
import { parseWith } from "./schemas.ts";

/** Default seconds a sandbox may idle (`SANDBOX_IDLE_TIMEOUT_SECONDS`): 10 minutes, as the Sandbox SDK's. */

/** Longest idle timeout a create may ask for: 7 days. */
const MAX_SANDBOX_IDLE_SECONDS = 7 * 86_400;

/**
 * Counts one call against a created sandbox before it starts: a 404 for an unknown id,
 * a 410 saying how an ended one ended (deleted, expired, lost), a 502 for a host that
 * does not answer. Answers how busy the sandbox's commands are, as its host just said,
 * for the call to be admitted by (decision 258); null for the default and the
 * `SANDBOXES` names, which pass through, and from a host that does not say.
 * @example const hostLoad = await useSandbox(env, body.sandbox, toolCallId);
 */
export async function useSandbox(
  env: Env,
  sandbox: string,
  toolCallId: string,
): Promise<ExecLoad | null> {
  if (placementOf(sandbox) === null) return null;
  return unwrap(await sandboxStub(env, sandbox).useForCall(toolCallId));
}

const positive = z.number().int().positive();

const createSandboxBody = z.strictObject({
  name: z.string().min(1).max(128).optional(),
  host: z
    .string()
    .regex(/^[a-z0-9-]{1,32}$/, "must be a SANDBOXES name of 1-32 lowercase letters, digits or '-'")
    .optional(),
  backend: z.enum(["host", "container"]).optional(),
  idleTimeoutSeconds: z.number().int().min(1).max(MAX_SANDBOX_IDLE_SECONDS).optional(),
  limits: z
    .strictObject({
      diskBytes: positive.optional(),
      maxExecs: positive.optional(),
      maxProcesses: positive.optional(),
      maxMemoryBytes: positive.optional(),
      maxFileBytes: positive.optional(),
      egressBytes: positive.optional(),
    })
    .optional(),
  /** What its commands may reach: `{ allow: [...] }` (decision 181); checked by `networkOf`. */
  network: z.unknown().optional(),
  /** Initial text files: workspace path -> UTF-8 content (initial-files.ts). */
  files: z.record(z.string(), z.string()).optional(),
  /** An initial tar archive, base64, extracted into the workspace as an upload is. */
  tar: z.base64().optional(),
});

const sandboxIdParam = z
  .string()
  .regex(CREATED_SANDBOX_ID, "must be a sandbox id, sbx_<host>_<20 hex digits>");

type SandboxRoutes = { Bindings: Env; Variables: { id: string } };

export const sandboxRoutes = new Hono<SandboxRoutes>();
sandboxRoutes.use("*", noStore);

/** The route's `:id`, validated (400 naming `path.id`). */
const withId = createMiddleware<SandboxRoutes>(async (c, next) => {
  c.set("id", parseWith(sandboxIdParam, c.req.param("id"), "path.id"));
  await next();
});

/** After `anyAgent`: a sandbox token opens its own sandbox's routes; another id is a 403. */
const own = createMiddleware<SandboxRoutes>(async (c, next) => {
  const sandbox = sandboxScope(principalOf(c));
  if (sandbox !== null && c.get("id") !== sandbox) refuseSandboxToken(sandbox);
  await next();
});

/** The answer of a create and of a token rotation: the view and the sandbox's new token. */
async function withToken(env: Env, view: SandboxView, nonce: string) {
  return { ...view, token: await sandboxTokenFor(env, view.id, nonce) };
}

sandboxRoutes.post("/", operatorOnly, async (c) => {
  const body = parseWith(createSandboxBody, await readJsonBody(c.req.raw), "body");
  if (body.backend === "container" && body.host !== undefined) {
    raise("bad_request", "body.host: a container sandbox has a container of its own; omit host");
  }
  for (const path of Object.keys(body.files ?? {})) {
    const problem = initialPathProblem(path);
    if (problem) raise("bad_request", `body.files: ${JSON.stringify(path)} ${problem}`);
  }
  const { view, token } = await makeSandbox(c.env, {
    name: body.name ?? null,
    ...(body.backend ? { backend: body.backend } : {}),
    ...(body.host ? { host: body.host } : {}),
    ...(body.idleTimeoutSeconds ? { idleTimeoutSeconds: body.idleTimeoutSeconds } : {}),
    limits: body.limits ?? {},
    network: networkOf(body.network ?? { allow: [] }),
  });
  const id = view.id;
  await putInitialFiles(c.env, id, body.tar, body.files);
  return c.json({ ...view, token }, 201);
});

/**
 * Extracts a create's `tar`, then its `files`, into the new sandbox's workspace, each as
 * an upload (the host checks every entry and the disk quota). One refused: the sandbox
 * is removed (it reads `deleted`) and the create answers the host's refusal.
 */
async function putInitialFiles(
  env: Env,
  id: string,
  tar: string | undefined,
  files: Record<string, string> | undefined,
): Promise<void> {
  const archives: Uint8Array[] = [];
  if (tar !== undefined) archives.push(Uint8Array.from(atob(tar), (ch) => ch.charCodeAt(0)));
  if (files && Object.keys(files).length > 0) archives.push(ustarOf(files));
  for (const [i, archive] of archives.entries()) {
    const put = await hostFetch(env, id, "PUT", filesPath(id, ""), {
      body: archive,
      type: "application/x-tar",
    });
    if (put.ok) {
      await put.value.body?.cancel();
      continue;
    }
    await sandboxStub(env, id).remove();
    const what = i === 0 && tar !== undefined ? "body.tar" : "body.files";
    raise(
      put.error.code,
      `${what}: ${put.error.message}; nothing was kept (the sandbox ${id} was removed)`,
    );
  }
}

sandboxRoutes.get("/", operatorOnly, async (c) => {
  const sandboxes = await c.env.SANDBOX_DIRECTORY.getByName("all").list();
  return c.json({ sandboxes });
});

/**
 * The warm pool of containers: its size, and how many are ready and starting (decision
 * 230). A deployment without the container backend has none: size 0.
 */
sandboxRoutes.get("/pool", operatorOnly, async (c) => {
  const pool = c.env.CONTAINER_POOL;
  if (!pool || !c.env.SANDBOX_CONTAINERS) return c.json({ size: 0, ready: 0, starting: 0 });
  return c.json(await pool.getByName(CONTAINER_POOL_NAME).view());
});

sandboxRoutes.get("/:id", anyAgent, withId, own, async (c) =>
  c.json(unwrap(await sandboxStub(c.env, c.get("id")).view())),
);

sandboxRoutes.delete("/:id", operatorOnly, withId, async (c) =>
  c.json(unwrap(await sandboxStub(c.env, c.get("id")).remove())),
);

/** A new token: the one before is dead at once (decision 250). */
sandboxRoutes.post("/:id/token", operatorOnly, withId, async (c) => {
  const nonce = newTokenNonce();
  await sandboxTokenFor(c.env, c.get("id"), nonce);
  const view = unwrap(await sandboxStub(c.env, c.get("id")).rotateToken(nonce));
  return c.json(await withToken(c.env, view, nonce));
});

/** A network policy from a request, or a 400 naming the bad entry. */
function networkOf(value: unknown): NetworkPolicy {
  const policy = checkNetworkPolicy(value);
  if (typeof policy === "string") raise("bad_request", policy);
  return policy;
}

sandboxRoutes.put("/:id/network", operatorOnly, withId, async (c) => {
  const policy = networkOf(await readJsonBody(c.req.raw));
  return c.json(unwrap(await sandboxStub(c.env, c.get("id")).setNetwork(policy)));
});

/** The policy, egress totals and the last 1,000 connections, from the sandbox's host. */
sandboxRoutes.get("/:id/network", anyAgent, withId, own, async (c) => {
  const id = c.get("id");
  unwrap(await sandboxStub(c.env, id).use(null));
  return c.json(unwrap(await hostCall<unknown>(c.env, id, "GET", `/v1/sandboxes/${id}/network`)));
});

/** Counts as use: the idle timeout starts again from now. */
sandboxRoutes.post("/:id/keepalive", anyAgent, withId, own, async (c) =>
  c.json(unwrap(await sandboxStub(c.env, c.get("id")).use(null))),
);

sandboxRoutes.put("/:id/files", anyAgent, withId, own, async (c) => {
  const id = c.get("id");
  unwrap(await sandboxStub(c.env, id).use(null));
  if (!c.req.raw.body) raise("bad_request", "send a tar archive as the request body");
  const res = unwrap(
    await hostFetch(c.env, id, "PUT", filesPath(id, c.req.query("path")), {
      body: c.req.raw.body,
      type: "application/x-tar",
      stream: true,
    }),
  );
  return new Response(res.body, { headers: { "content-type": "application/json" } });
});

sandboxRoutes.get("/:id/files", anyAgent, withId, own, async (c) => {
  const id = c.get("id");
  unwrap(await sandboxStub(c.env, id).use(null));
  const res = unwrap(
    await hostFetch(c.env, id, "GET", filesPath(id, c.req.query("path")), {
      stream: true,
    }),
  );
  const name = (c.req.query("path") || id).replace(/[^A-Za-z0-9._-]+/g, "_");
  return new Response(res.body, {
    headers: {
      "content-type": "application/x-tar",
      "content-disposition": `attachment; filename="${name}.tar"`,
    },
  });
});

function filesPath(id: string, path: string | undefined): string {
  return `/sandboxes/${id}/v1/files?path=${encodeURIComponent(path ?? "")}`;
}
