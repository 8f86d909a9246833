import { type ChildProcess, spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import * as Net from "node:net";

/**
 * How long a bridge with no open connection is kept for the next one before it is
 * stopped: a page's requests come in bursts, and an idle sandbox keeps no process.
 */
export const INGRESS_IDLE_MS = 30_000;

/**
 * The bridge's own code, run as `node -e` inside the namespace; it takes nothing from
 * the module around it. It listens on the host-only socket `inSocket`; each connection's
 * first line names a port of the namespace's loopback, and the bridge answers `ok` and
 * carries bytes, or `error <code>`. It says `ready` on stdout once it listens, and exits
 * when the host closes its stdin.
 */
function ingressMain(net: typeof Net, inSocket: string, stdin: NodeJS.ReadableStream): void {
  // An end is passed on as an end (what is still buffered is delivered first); only an
  // error tears the other side down. Destroying on close cut the tail of a large answer
  // that the app wrote just before closing (decision 182).
  const pipe = (a: Net.Socket, b: Net.Socket) => {
    a.pipe(b);
    b.pipe(a);
    a.on("error", () => b.destroy());
    b.on("error", () => a.destroy());
  };
  // Half-open both ways: a client that ends its request still reads the answer.
  const into = net.createServer({ allowHalfOpen: true }, (host) => {
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
      const app = net.connect({
        port: Number(head.slice(0, end)),
        host: "127.0.0.1",
        allowHalfOpen: true,
      });
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
  into.listen(inSocket, () => process.stdout.write("ready\n"));
  stdin.on("end", () => process.exit(0));
  stdin.resume();
}

/**
 * The way in of preview URLs for one sandbox (decision 182): a bridge process inside its
 * namespace, started when a connection needs it, stopped after `idleMs` with no open
 * connection, and started again if it died (decision 254).
 */
export class IngressBridge {
  readonly #enter: () => readonly string[];
  readonly #inSocket: string;
  #child: ChildProcess | null = null;
  #started: Promise<void> | null = null;
  #open = 0;
  #idle: NodeJS.Timeout | null = null;
  #closed = false;
  readonly #idleMs: number;

  constructor(enter: () => readonly string[], inSocket: string, idleMs = INGRESS_IDLE_MS) {
    this.#enter = enter;
    this.#inSocket = inSocket;
    this.#idleMs = idleMs;
  }

  /** Whether a bridge process runs now. */
  get running(): boolean {
    return this.#child !== null;
  }

  /**
   * A connection to `port` on the sandbox's own loopback, or an error whose code says
   * why (`ECONNREFUSED`: nothing listens).
   */
  async connect(port: number): Promise<Net.Socket> {
    if (this.#closed) throw Object.assign(new Error("the sandbox has ended"), { code: "ENOENT" });
    this.#hold();
    try {
      await this.#start();
      const socket = await askFor(this.#inSocket, port);
      socket.once("close", () => this.#release());
      return socket;
    } catch (err) {
      this.#release();
      throw err;
    }
  }

  /** Stops the bridge for good; its connections end with it. */
  stop(): void {
    this.#closed = true;
    this.#kill();
  }

  #hold(): void {
    this.#open += 1;
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = null;
  }

  #release(): void {
    this.#open -= 1;
    if (this.#open > 0 || this.#closed) return;
    this.#idle = setTimeout(() => this.#kill(), this.#idleMs);
    this.#idle.unref();
  }

  #kill(): void {
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = null;
    this.#child?.kill("SIGKILL");
    this.#child = null;
    this.#started = null;
  }

  #start(): Promise<void> {
    this.#started ??= this.#spawn().catch((err: unknown) => {
      this.#started = null;
      throw err;
    });
    return this.#started;
  }

  async #spawn(): Promise<void> {
    // A bridge that was killed left its socket file, which would refuse to listen again.
    await rm(this.#inSocket, { force: true });
    const code = `(${ingressMain.toString()})(require("node:net"), process.argv[1], process.stdin)`;
    const [file, ...args] = [...this.#enter(), process.execPath, "-e", code, this.#inSocket];
    const child = spawn(file as string, args, { stdio: ["pipe", "pipe", "pipe"] });
    this.#child = child;
    return new Promise((resolve, reject) => {
      let err = "";
      child.stderr?.on("data", (c: Buffer) => {
        err = (err + c.toString()).slice(-2000);
      });
      child.once("error", reject);
      child.once("exit", (status) => {
        // A bridge that dies is started again by the next connection.
        if (this.#child === child) this.#kill();
        reject(new Error(`the sandbox's way in exited (${status}): ${err.trim()}`));
      });
      child.stdout?.once("data", () => resolve());
    });
  }
}

/** Asks the bridge at `inSocket` for `port` and resolves with the carried connection. */
function askFor(inSocket: string, port: number): Promise<Net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = Net.connect(inSocket);
    let line = "";
    socket.once("error", reject);
    socket.write(`${port}\n`);
    const onData = (chunk: Buffer) => {
      line += chunk.toString("latin1");
      const end = line.indexOf("\n");
      if (end < 0) return;
      socket.off("data", onData);
      socket.pause();
      const answer = line.slice(0, end);
      const rest = Buffer.from(line.slice(end + 1), "latin1");
      if (answer !== "ok") {
        socket.destroy();
        reject(Object.assign(new Error(answer), { code: answer.replace(/^error /, "") }));
        return;
      }
      socket.removeListener("error", reject);
      if (rest.length > 0) socket.unshift(rest);
      resolve(socket);
    };
    socket.on("data", onData);
  });
}
