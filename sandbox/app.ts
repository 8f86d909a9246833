/**
 * The sandbox host's app: it builds the workspace, spill folder, jail and exec registry,
 * and wires the route groups (health, exec, spill, files) behind one error handler,
 * the bearer token and a body limit. The routes live one level down, one file per group.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { bearerAuth } from "./auth.ts";
import type { SandboxConfig } from "./config.ts";
import { errorBody, internalError, SandboxError } from "./errors.ts";
import { ExecGate } from "./exec/exec-gate.ts";
import { ExecRegistry } from "./exec/exec-registry.ts";
import { inputRoutes } from "./exec/input-routes.ts";
import { JailAhead } from "./exec/jail-ahead.ts";
import { execRoutes } from "./exec/routes.ts";
import { fileRoutes } from "./files/routes.ts";
import { healthRoute } from "./health-route.ts";
import { Cgroups } from "./jail/cgroups.ts";
import { Jail, type JailNamespace } from "./jail/jail.ts";
import { SpillFolder } from "./spill-folder.ts";
import { spillRoutes } from "./spill-route.ts";
import { Workspace } from "./workspace.ts";

const MAX_BODY_BYTES = 1024 * 1024;

/** Room a request body has above a write's content: JSON escaping of a whole file can double it. */
function bodyLimitFor(config: SandboxConfig): number {
  return Math.max(MAX_BODY_BYTES, 2 * config.maxWriteBytes + 64 * 1024);
}

export interface SandboxApp {
  app: Hono;
  registry: ExecRegistry;
  /** Its commands running and waiting their turn (exec-gate.ts). */
  gate: ExecGate;
  workspace: Workspace;
  spills: SpillFolder;
  jail: Jail;
  /** A jail for its first command, started by a created sandbox (decision 276); idle otherwise. */
  ahead: JailAhead;
}

/**
 * The sandbox host's routes: `/healthz` (open), and behind the bearer token the exec
 * routes (exec/routes.ts), the spill route (spill-route.ts) and the file tools
 * (files/routes.ts).
 * @example const { app } = createSandboxApp(configFromEnv(process.env));
 */
export function createSandboxApp(
  config: SandboxConfig,
  /** Where its commands' pids cgroups go (a created sandbox's own); default: a new parent. */
  cgroups: () => Cgroups | null = () => Cgroups.find("pids"),
  /** The network namespace its commands run in (a created sandbox's own); default: one per command. */
  namespace: JailNamespace | null = null,
  /** False for a created sandbox's app: the host's own jail has proved bubblewrap works (decision 227). */
  probeJail = true,
): SandboxApp {
  const workspace = new Workspace(config.root);
  const spills = new SpillFolder(config.spillDir ?? `${workspace.root}.spill`, workspace.root);
  const jail = new Jail(workspace.root, {
    spillFolder: spills.hostPath,
    isolation: config.isolation,
    network: config.network,
    proc: config.jailProc,
    namespace,
    probe: probeJail,
    limits: config.limits,
    cgroups: config.isolation === "bwrap" ? cgroups() : null,
    memory: config.isolation === "bwrap" ? Cgroups.find("memory") : null,
  });
  const ahead = new JailAhead(jail, workspace.root);
  const registry = new ExecRegistry(config.keepFinishedMs);
  const gate = new ExecGate(config.maxRunningExecs, config.maxQueuedExecs);
  const maxBodyBytes = bodyLimitFor(config);
  const app = new Hono();

  app.onError((err, c) => {
    if (err instanceof SandboxError) {
      if (err.retryAfterSec !== undefined) c.header("Retry-After", String(err.retryAfterSec));
      return c.json(errorBody(err), err.status);
    }
    return c.json(errorBody(internalError(err, c.req.path)), 500 as ContentfulStatusCode);
  });
  app.notFound((c) =>
    c.json(errorBody(new SandboxError("not_found", `no route ${c.req.method} ${c.req.path}`)), 404),
  );

  app.route("/", healthRoute(gate));
  app.use("/v1/*", bearerAuth(config.token));
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: maxBodyBytes,
      onError: () => {
        throw new SandboxError("too_large", `request body exceeds ${maxBodyBytes} bytes`);
      },
    }),
  );
  app.route("/", execRoutes({ config, registry, gate, workspace, spills, jail, ahead }));
  app.route("/v1/exec", inputRoutes(registry));
  app.route("/", spillRoutes(spills));
  app.route("/", fileRoutes({ config, workspace, spills, jail }));

  return { app, registry, gate, workspace, spills, jail, ahead };
}
