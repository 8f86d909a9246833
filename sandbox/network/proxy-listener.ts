import { spawn } from "node:child_process";
import * as Net from "node:net";

/**
 * The loopback port inside every sandbox's network namespace where the egress proxy
 * takes the jail's connections. Below 1024, so no jailed command (no capabilities) can
 * ever bind it, and it is bound before any command runs.
 */
export const BRIDGE_PROXY_PORT = 900;

/**
 * The child's code, run as `node -e` inside the namespace (the bundled host has no file
 * to point at); it takes nothing from the module around it. It makes the listening
 * socket `127.0.0.1:<port>` there, hands it to the host over Node's IPC channel, and
 * lives until the host lets it go (the host may need its namespaces while it lives).
 */
function handOverMain(net: typeof Net, port: number): void {
  const server = net.createServer();
  server.listen(port, "127.0.0.1", () => {
    process.send?.("proxy", server, () => server.close());
  });
  process.on("disconnect", () => process.exit(0));
}

/**
 * Makes the proxy's listening socket inside the namespace `enter` leads into (a child of
 * its own makes it there, since a socket belongs to the namespace it was made in) and
 * resolves with it, now the host's. `whileAlive` runs with the child's pid before the
 * child exits: a host that is not root takes hold of the namespaces the child made then.
 * Nothing of the child stays: an idle sandbox costs no process (decision 254).
 * @example const listener = await takeProxyListener(ns.enter(), () => {});
 */
export function takeProxyListener(
  enter: readonly string[],
  whileAlive: (pid: number) => void,
): Promise<Net.Server> {
  const code = `(${handOverMain.toString()})(require("node:net"), ${BRIDGE_PROXY_PORT})`;
  // Without its JIT the child starts on about half the CPU (40 ms against 74 here), and
  // the pools make one per create, beside the creates they serve (decision 277).
  const [file, ...args] = [...enter, process.execPath, "--jitless", "-e", code];
  const child = spawn(file as string, args, { stdio: ["ignore", "ignore", "pipe", "ipc"] });
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr?.on("data", (c: Buffer) => {
      err = (err + c.toString()).slice(-2000);
    });
    child.once("error", reject);
    child.once("exit", (status) =>
      reject(new Error(`the sandbox's network could not be made (${status}): ${err.trim()}`)),
    );
    child.once("message", (message, handle) => {
      if (message !== "proxy" || !(handle instanceof Net.Server)) return;
      child.removeAllListeners("exit");
      try {
        whileAlive(child.pid as number);
        resolve(handle);
      } catch (cause) {
        handle.close();
        reject(cause);
      } finally {
        child.disconnect();
      }
    });
  });
}
