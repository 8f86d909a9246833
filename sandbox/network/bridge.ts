import { type ChildProcess, spawn } from "node:child_process";
import * as Net from "node:net";

/**
 * The loopback port inside every sandbox's network namespace where the bridge takes
 * proxy connections. Below 1024, so no jailed command (no capabilities) can ever bind
 * it, and the bridge binds it before any command runs.
 */
export const BRIDGE_PROXY_PORT = 900;

/**
 * The bridge's own code, run as `node -e` inside the namespace, so it needs nothing but
 * Node (the bundled host has no file to point at). It takes nothing from the module
 * around it: every dependency comes in as an argument.
 *
 * Out: it makes the listening socket `127.0.0.1:<proxyPort>` inside the namespace and
 * hands it to the host over Node's IPC channel, then closes its own copy: the host's
 * proxy accepts the jail's connections itself, with no hop through the bridge.
 * In: the host-only socket `inSocket`; each connection's first line names a port of
 * the namespace's loopback; the bridge answers `ok` and carries bytes, or `error <code>`.
 */
function bridgeMain(net: typeof Net, argv: string[], stdin: NodeJS.ReadableStream): void {
  const [proxyPort, inSocket] = argv as [string, string];
  // An end is passed on as an end (what is still buffered is delivered first); only an
  // error tears the other side down. Destroying on close cut the tail of a large answer
  // that the app wrote just before closing (decision 182).
  const pipe = (a: Net.Socket, b: Net.Socket) => {
    a.pipe(b);
    b.pipe(a);
    a.on("error", () => b.destroy());
    b.on("error", () => a.destroy());
  };
  const out = net.createServer();
  const into = net.createServer((host) => {
    let head = "";
    const onData = (chunk: Buffer) => {
      head += chunk.toString("latin1");
      const end = head.indexOf("\n");
      if (end < 0) {
        if (head.length > 16) host.destroy();
        return;
      }
      host.off("data", onData);
      host.pause();
      const rest = Buffer.from(head.slice(end + 1), "latin1");
      const port = Number(head.slice(0, end));
      const app = net.connect(port, "127.0.0.1");
      app.once("error", (err: NodeJS.ErrnoException) => {
        host.end(`error ${err.code ?? "EIO"}\n`);
      });
      app.once("connect", () => {
        app.removeAllListeners("error");
        host.write("ok\n");
        if (rest.length > 0) app.write(rest);
        pipe(host, app);
        host.resume();
      });
    };
    host.on("data", onData);
    host.on("error", () => host.destroy());
  });
  into.listen(inSocket, () => {
    out.listen(Number(proxyPort), "127.0.0.1", () => {
      process.send?.("proxy", out, () => out.close());
    });
  });
  // The host holds stdin open: when it goes, so does the bridge.
  stdin.on("end", () => process.exit(0));
  stdin.resume();
}

/** The running bridge of one sandbox. */
export interface Bridge {
  child: ChildProcess;
  /** The listening socket on `127.0.0.1:900` inside the namespace, now the host's. */
  proxyListener: Net.Server;
  stop(): void;
}

/**
 * Starts the bridge inside the namespace `enter` leads into, and resolves once its way
 * in listens and its way out has been handed over.
 * @example const bridge = await startBridge(ns.enter(), inSock);
 */
export function startBridge(enter: string[], inSocket: string): Promise<Bridge> {
  const code = `(${bridgeMain.toString()})(require("node:net"), process.argv.slice(1), process.stdin)`;
  const [file, ...args] = [
    ...enter,
    process.execPath,
    "-e",
    code,
    String(BRIDGE_PROXY_PORT),
    inSocket,
  ];
  const child = spawn(file!, args, { stdio: ["pipe", "ignore", "pipe", "ipc"] });
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr?.on("data", (c: Buffer) => {
      err = (err + c.toString()).slice(-2000);
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      reject(new Error(`the sandbox's network bridge exited (${code}): ${err.trim()}`)),
    );
    child.once("message", (message, handle) => {
      if (message !== "proxy" || !(handle instanceof Net.Server)) return;
      child.removeAllListeners("exit");
      // The channel stays open only as long as it is needed: nothing else goes over it.
      child.disconnect();
      resolve({ child, proxyListener: handle, stop: () => child.kill("SIGKILL") });
    });
  });
}
