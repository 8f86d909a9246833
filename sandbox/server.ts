import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createSandboxApp } from "./app.ts";
import type { SandboxConfig } from "./config.ts";

/** A listening sandbox host. */
export interface SandboxHost {
  /** Base URL, e.g. `http://127.0.0.1:8788`. */
  url: string;
  /** Real path of the workspace root. */
  root: string;
  /** What an operator should know about the isolation (none, or no process limit). */
  warnings: string[];
  /** Kills running execs and stops listening. */
  close(): Promise<void>;
}

/**
 * Starts the sandbox host on `config.host:config.port` (port 0 picks a free one).
 * @example const host = await startSandboxHost({ ...config, port: 0 });
 */
export function startSandboxHost(config: SandboxConfig): Promise<SandboxHost> {
  const { app, registry, workspace, spills, jail } = createSandboxApp(config);
  return new Promise((resolve, reject) => {
    const server = serve(
      { fetch: app.fetch, hostname: config.host, port: config.port },
      (info: AddressInfo) => {
        const host = info.family === "IPv6" ? `[${info.address}]` : info.address;
        resolve({
          url: `http://${host}:${info.port}`,
          root: workspace.root,
          warnings: jail.warnings(),
          close: async () => {
            await registry.killAll(config.killGraceMs + 1000);
            jail.dispose();
            spills.close();
            await new Promise<void>((done) => {
              server.close(() => done());
              if ("closeAllConnections" in server) server.closeAllConnections();
            });
          },
        });
      },
    );
    server.once("error", reject);
  });
}
