import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { createSandboxApp } from "./app.ts";
import type { SandboxConfig } from "./config.ts";
import { prepareOutputPipes } from "./exec/output-pipe.ts";
import { previewUpgrade } from "./network/preview-upgrade.ts";
import { mountNosuid } from "./nosuid-mount.ts";
import { sandboxesConfigFromEnv } from "./sandboxes/config.ts";
import { sandboxRoutes } from "./sandboxes/routes.ts";
import { SandboxSet } from "./sandboxes/sandbox-set.ts";

/** A listening sandbox host. */
export interface SandboxHost {
  /** Base URL, e.g. `http://127.0.0.1:8788`. */
  url: string;
  /** Real path of the workspace root. */
  root: string;
  /** What an operator should know about the isolation (none, or no process limit). */
  warnings: string[];
  /** The created sandboxes it holds. */
  sandboxes: SandboxSet;
  /** Kills running execs, lets go of every created sandbox (its files and record stay, decision 246) and stops listening. */
  close(): Promise<void>;
}

/** How long an idle connection to the host stays open (Node's default is 5 s). */
const IDLE_CONNECTION_MS = 120_000;

/**
 * Starts the sandbox host on `config.host:config.port` (port 0 picks a free one).
 * @example const host = await startSandboxHost({ ...config, port: 0 });
 */
export async function startSandboxHost(config: SandboxConfig): Promise<SandboxHost> {
  // What a jailed command leaves in the workspace must not be privileged on the host (decision 240).
  const mount = config.isolation === "bwrap" ? await mountNosuid(config.root) : null;
  let parts: ReturnType<typeof createSandboxApp>;
  let sandboxes: SandboxSet;
  try {
    parts = createSandboxApp(config);
    // Created sandboxes' jails take the /proc this jail settled on, and skip its probe.
    sandboxes = await SandboxSet.open(
      { ...config, jailProc: parts.jail.proc },
      config.sandboxes ?? sandboxesConfigFromEnv({}, parts.workspace.root, config.limits),
    );
  } catch (err) {
    await mount?.release();
    throw err;
  }
  const { app, registry, workspace, spills, jail } = parts;
  // The first command then finds its output pipe made (sandbox/exec/output-pipe.ts).
  prepareOutputPipes();
  // Created sandboxes first (their own prefixes), then the default workspace's routes.
  const host = new Hono();
  host.route("/", sandboxRoutes(sandboxes, config.token));
  host.all("*", (c) => app.fetch(c.req.raw));
  return new Promise((resolve, reject) => {
    const server = serve(
      { fetch: host.fetch, hostname: config.host, port: config.port },
      (info: AddressInfo) => {
        const host = info.family === "IPv6" ? `[${info.address}]` : info.address;
        sandboxes.reservePort(info.port);
        resolve({
          url: `http://${host}:${info.port}`,
          root: workspace.root,
          warnings: [
            ...jail.warnings(),
            ...(mount?.warning ? [mount.warning] : []),
            ...sandboxes.warnings(),
          ],
          sandboxes,
          close: async () => {
            await Promise.all([registry.killAll(config.killGraceMs + 1000), sandboxes.closeAll()]);
            jail.dispose();
            spills.close();
            await new Promise<void>((done) => {
              server.close(() => done());
              if ("closeAllConnections" in server) server.closeAllConnections();
            });
            await mount?.release();
          },
        });
      },
    );
    // The Worker pools its connections: a host that closed an idle one after Node's 5 s
    // while the Worker sent its next request on it (a create's exec after its probe, on a
    // loaded machine) lost that request ("Network connection lost"). Idle connections are
    // kept longer than the Worker leaves them idle (decision 248).
    if ("keepAliveTimeout" in server) {
      server.keepAliveTimeout = IDLE_CONNECTION_MS;
      server.headersTimeout = IDLE_CONNECTION_MS + 5000;
    }
    // WebSockets through preview URLs (decision 182); no other route upgrades.
    server.on("upgrade", previewUpgrade(sandboxes, config.token));
    server.once("error", (err) => {
      void mount?.release().then(() => reject(err));
    });
  });
}
