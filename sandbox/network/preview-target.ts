/**
 * One connection to an app's port inside a created sandbox, for the way in (decision
 * 182): only through that sandbox's own bridge, so a request for sandbox A can only ever
 * reach A's loopback. Refusals say what to do: no such sandbox, no network of its own, or
 * nothing listening on the port.
 */
import type * as net from "node:net";
import { SandboxError } from "../errors.ts";
import type { SandboxSet } from "../sandboxes/sandbox-set.ts";

/**
 * A socket to `port` on sandbox `id`'s loopback, or a `SandboxError` saying why not.
 * @example const socket = await connectApp(set, "sbx_default_…", 8000);
 */
export async function connectApp(set: SandboxSet, id: string, port: number): Promise<net.Socket> {
  const sandbox = set.find(id);
  if (!sandbox.network) {
    throw new SandboxError(
      "no_listener",
      `sandbox ${id} has no network of its own on this host (it needs the bubblewrap jail), so nothing in it can be reached`,
    );
  }
  try {
    return await sandbox.network.connectInto(port);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === "ECONNREFUSED"
        ? "nothing listens there"
        : `the connection failed: ${code ?? (err as Error).message}`;
    throw new SandboxError(
      "no_listener",
      `port ${port} of sandbox ${id}: ${why}; start the server in the sandbox (for example 'python3 -m http.server ${port}') and try again`,
    );
  }
}
