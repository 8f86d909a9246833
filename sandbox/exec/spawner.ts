/**
 * Starts commands from a small process beside the host (decision 259), not from the
 * host itself.
 *
 * Node starts a child with `fork`, on the event loop, and a fork copies the page tables
 * of the whole host: 11 ms from a small Node on the 2-core machine the benchmarks run
 * on, 19 ms at 160 MB, 56 ms at 370 MB. The spawner is a Python process started once;
 * its `posix_spawn` starts a child without copying the parent's memory (3 ms here), on a
 * thread of its own while the host's event loop goes on.
 *
 * Descriptors cannot be handed to another process by Node, so the child opens its own:
 * the host names FIFOs by path (output-pipe.ts), which the child opens before it runs.
 * Where `python3` is missing, or the spawner has died, `sharedSpawner()` is null and
 * the host spawns as before.
 *
 * It also runs the host's own short commands with their output captured (`run`, for
 * host-command.ts), and on a root host makes sockets inside a sandbox's network
 * namespace, handed over on Node's IPC channel: the proxy's listening socket
 * (`listenIn`; decision 277) and the way in's connections (`connectIn`; decision 187).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { Server, Socket } from "node:net";
import { createInterface } from "node:readline";
import { findExecutable } from "../jail/find-executable.ts";

/** A process to start, in a session (and process group) of its own. */
export interface SpawnPlan {
  file: string;
  /** As `child_process.spawn` takes them: `file` is the child's argv[0]. */
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Descriptors the child opens by path before it runs: `[fd, path, "r" | "w"]`. */
  open: [number, string, "r" | "w"][];
  /** Descriptors made copies of another first: `[fd, from]` (stderr onto stdout). */
  dup: [number, number][];
}

/** How a process ended: its exit code, or the signal that ended it. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * How long `connectIn` waits for an app to accept: on loopback a connection is accepted
 * or refused at once, unless the app's queue of connections is full.
 */
const CONNECT_IN_TIMEOUT_S = 10;

/** How much of each stream a captured run (`Spawner.run`) keeps: its first MiB. */
export const CAPTURED_MAX_BYTES = 1 << 20;

/** What a captured run printed, each stream cut at `CAPTURED_MAX_BYTES`, as UTF-8. */
export interface CapturedOutput {
  stdout: string;
  stderr: string;
}

export interface SpawnedProcess {
  pid: number;
  /** Settles when the process has ended (never rejects). */
  exited: Promise<ProcessExit>;
}

/**
 * The spawner's code, run as `python3 -c` (the bundled host has no file to point at).
 * One JSON request per line in, one JSON answer per line out: `{job, pid}` or `{job,
 * error}` for the start, then `{job, code, signal}` once the process has ended. Every
 * signal is back at its default in the child (Python ignores SIGPIPE), its mask empty.
 * The spawner stands in `/` between commands.
 */
const SPAWNER_CODE = String.raw`
import array, ctypes, errno, json, os, signal, socket, sys, threading, time
lock = threading.Lock()
def say(message):
    data = (json.dumps(message) + "\n").encode()
    with lock:
        try:
            while data:
                data = data[os.write(1, data):]
        except BrokenPipeError:
            # The host has gone: nobody is left to tell.
            os._exit(0)
def why(error):
    return (errno.errorcode.get(error.errno, "") + " " + (error.strerror or "")).strip()
DEFAULTS = [s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP)]
def ending(status):
    if os.WIFSIGNALED(status):
        return {"code": None, "signal": signal.Signals(os.WTERMSIG(status)).name}
    return {"code": os.WEXITSTATUS(status), "signal": None}
def reap(job, pid):
    _, status = os.waitpid(pid, 0)
    say({"job": job, **ending(status)})
CAPTURED_MAX = ${CAPTURED_MAX_BYTES}
def drain(fd, into):
    try:
        while True:
            data = os.read(fd, 65536)
            if not data:
                break
            into += data[:max(0, CAPTURED_MAX - len(into))]
    finally:
        os.close(fd)
def reap_captured(job, pid, pipes):
    outputs = [bytearray(), bytearray()]
    drains = [threading.Thread(target=drain, args=(fd, into), daemon=True)
              for fd, into in zip(pipes, outputs)]
    for thread in drains:
        thread.start()
    _, status = os.waitpid(pid, 0)
    # A process it left behind may hold its output open: what came within a second of
    # the exit is the output.
    deadline = time.monotonic() + 1
    for thread in drains:
        thread.join(max(0, deadline - time.monotonic()))
    text = [bytes(into).decode("utf-8", "replace") for into in outputs]
    say({"job": job, **ending(status), "stdout": text[0], "stderr": text[1]})
# The host's IPC channel (Node's): listening sockets are handed over on it. Not for the
# commands it starts.
channel = None
if "NODE_CHANNEL_FD" in os.environ:
    channel = socket.socket(fileno=int(os.environ.pop("NODE_CHANNEL_FD")))
    channel.set_inheritable(False)
    os.environ.pop("NODE_CHANNEL_SERIALIZATION_MODE", None)
    def ignore_acks():
        while channel.recv(4096):
            pass
    threading.Thread(target=ignore_acks, daemon=True).start()
CLONE_NEWNET = 0x40000000
HOME_NET = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
libc = ctypes.CDLL(None, use_errno=True)
def enter_net(fd):
    if libc.setns(fd, CLONE_NEWNET) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
def listen_in(job, path, port):
    # A socket belongs to the namespace its thread was in when it was made: this thread
    # steps in, makes it, and steps back before it starts anything.
    ns = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        enter_net(ns)
        try:
            server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                server.bind(("127.0.0.1", port))
                server.listen(511)
            except OSError:
                server.close()
                raise
        finally:
            try:
                enter_net(HOME_NET)
            except OSError:
                # Never start a command from a sandbox's namespace: the host starts its own.
                os._exit(1)
    finally:
        os.close(ns)
    hand_over(job, "net.Server", server)
channel_lock = threading.Lock()
def hand_over(job, kind, sock):
    # One message per socket, whole: connections are handed over from threads of their own.
    handle = json.dumps({"cmd": "NODE_HANDLE", "type": kind, "msg": {"job": job}})
    rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [sock.fileno()]))]
    try:
        with channel_lock:
            channel.sendmsg([(handle + "\n").encode()], rights)
    finally:
        sock.close()
CONNECT_TIMEOUT_S = ${CONNECT_IN_TIMEOUT_S}
def connect_in(job, path, port):
    # A thread of its own, which steps into the namespace and stays there until it ends:
    # an app slow to accept holds up no command the spawner starts.
    try:
        ns = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            enter_net(ns)
        finally:
            os.close(ns)
        conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            conn.settimeout(CONNECT_TIMEOUT_S)
            conn.connect(("127.0.0.1", port))
        except OSError:
            conn.close()
            raise
        hand_over(job, "net.Socket", conn)
    except TimeoutError:
        say({"job": job, "error": "ETIMEDOUT the app did not accept in time"})
    except OSError as error:
        say({"job": job, "error": why(error)})
for line in sys.stdin:
    request = json.loads(line)
    job = request["job"]
    if "listen" in request:
        try:
            if channel is None:
                raise OSError(errno.ENOTCONN, "the spawner has no channel to the host")
            listen_in(job, request["listen"], request["port"])
        except OSError as error:
            say({"job": job, "error": why(error)})
        continue
    if "connect" in request:
        if channel is None:
            say({"job": job, "error": "ENOTCONN the spawner has no channel to the host"})
        else:
            threading.Thread(target=connect_in, args=(job, request["connect"], request["port"]),
                             daemon=True).start()
        continue
    if "fifos" in request:
        try:
            for path in request["fifos"]:
                os.mkfifo(path, 0o600)
            say({"job": job, "made": True})
        except OSError as error:
            say({"job": job, "error": why(error)})
        continue
    captured = request.get("capture", False)
    pipes = []
    try:
        os.chdir(request["cwd"])
        actions = [(os.POSIX_SPAWN_OPEN, fd, path, os.O_WRONLY if mode == "w" else os.O_RDONLY, 0)
                   for fd, path, mode in request["open"]]
        actions += [(os.POSIX_SPAWN_DUP2, source, fd) for fd, source in request["dup"]]
        if captured:
            # Nothing to read, and its output and errors into pipes the spawner reads;
            # the pipes' own descriptors close at the exec (Python makes them so).
            pipes = [os.pipe(), os.pipe()]
            actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                       (os.POSIX_SPAWN_DUP2, pipes[0][1], 1), (os.POSIX_SPAWN_DUP2, pipes[1][1], 2)]
        argv = [request["file"]] + request["args"]
        start = os.posix_spawnp if "/" not in request["file"] else os.posix_spawn
        pid = start(request["file"], argv, request.get("env", os.environ),
                    file_actions=actions, setsid=True, setsigdef=DEFAULTS, setsigmask=[])
    except OSError as error:
        for read, write in pipes:
            os.close(read)
            os.close(write)
        say({"job": job, "error": why(error)})
        continue
    finally:
        # Out of the command's folder: a spawner standing in a sandbox's disk would keep
        # it mounted after its sandbox is deleted.
        os.chdir("/")
    say({"job": job, "pid": pid})
    if captured:
        for _, write in pipes:
            os.close(write)
        threading.Thread(target=reap_captured, args=(job, pid, [read for read, _ in pipes]),
                         daemon=True).start()
    else:
        threading.Thread(target=reap, args=(job, pid), daemon=True).start()
`;

type Answer =
  | { job: number; made: true }
  | { job: number; pid: number }
  | { job: number; error: string }
  | ({ job: number } & ProcessExit & Partial<CapturedOutput>);

interface Job {
  /** Told the pid, or for a `makeFifos` that they are made (no pid: 0). */
  started: (pid: number) => void;
  failed: (error: Error) => void;
  exited: (exit: ProcessExit & Partial<CapturedOutput>) => void;
  /** A `listenIn`'s socket, handed over on the IPC channel. */
  listening?: (server: Server) => void;
  /** A `connectIn`'s socket, handed over on the IPC channel. */
  connected?: (socket: Socket) => void;
  pid: number | null;
}

/** How often a process whose spawner died is looked for, until it is gone. */
const ORPHAN_POLL_MS = 100;

export class Spawner {
  readonly #child: ChildProcess;
  readonly #jobs = new Map<number, Job>();
  #nextJob = 0;
  #alive = true;

  private constructor(child: ChildProcess) {
    this.#child = child;
    child.stdin?.on("error", () => {});
    createInterface({ input: child.stdout! }).on("line", (line) => this.#answer(line));
    child.on("exit", () => this.#died());
    child.on("error", () => this.#died());
    child.on("message", (message, handle) => this.#handed(message, handle));
    child.channel?.unref();
    // The spawner keeps the host alive only while a process it started runs (its exit is
    // still to be told), and ends with the host (its stdin closes then).
    child.unref();
    (child.stdin as Socket | null)?.unref();
    this.#holdWhileRunning();
  }

  #holdWhileRunning(): void {
    const out = this.#child.stdout as Socket | null;
    if (this.#jobs.size > 0) out?.ref();
    else out?.unref();
  }

  /**
   * Starts a spawner, or answers null where `python3` is not on PATH.
   * @example const spawner = Spawner.start(); const child = await spawner?.spawn(plan);
   */
  static start(python = findExecutable("python3")): Spawner | null {
    if (!python) return null;
    // A process group of its own: a signal to the host's group (a terminal's Ctrl-C, a
    // supervisor's stop) leaves it to the host's shutdown, whose unmounts it runs; it
    // ends when the host does (its stdin closes).
    const child = spawn(python, ["-c", SPAWNER_CODE], {
      cwd: "/",
      stdio: ["pipe", "pipe", "inherit", "ipc"],
      detached: true,
    });
    return new Spawner(child);
  }

  get alive(): boolean {
    return this.#alive;
  }

  /** The spawner's own pid (a test ends it to see what the host does then). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Starts `plan`; rejects when it could not be started (the error names why). */
  spawn(plan: SpawnPlan): Promise<SpawnedProcess> {
    return new Promise((resolve, reject) => {
      let ended: (exit: ProcessExit) => void = () => {};
      const exited = new Promise<ProcessExit>((settle) => {
        ended = settle;
      });
      const entry: Job = {
        pid: null,
        started: (pid) => {
          entry.pid = pid;
          resolve({ pid, exited });
        },
        failed: reject,
        exited: (exit) => ended({ code: exit.code, signal: exit.signal }),
      };
      this.#send(plan, entry);
    });
  }

  /**
   * Runs `file` (looked for on PATH when it has no `/`) with `args` and the environment
   * the host started the spawner with, from `/`, reading nothing; answers how it ended
   * and what it printed. Rejects only when it could not be started.
   * @example const { code, stderr } = await spawner.run("umount", ["/srv/sandboxes/x/disk"]);
   */
  run(file: string, args: string[]): Promise<ProcessExit & CapturedOutput> {
    return new Promise((resolve, reject) => {
      // No env: the spawner's own, which is the host's (it was started with it).
      const request = { file, args, cwd: "/", open: [], dup: [], capture: true };
      const entry: Job = {
        pid: null,
        started: (pid) => {
          entry.pid = pid;
        },
        failed: reject,
        exited: ({ code, signal, stdout = "", stderr = "" }) =>
          resolve({ code, signal, stdout, stderr }),
      };
      this.#send(request, entry);
    });
  }

  /**
   * Makes a socket listening on `127.0.0.1:port` inside the network namespace held at
   * `namespaceFile`, and hands it to the host: what a Node child entered into the
   * namespace did before (decision 277), without starting a process. Needs the host to
   * be allowed to enter it (root).
   * @example const server = await spawner.listenIn("/srv/sandboxes/.ready/networks/x/ns", 900);
   */
  listenIn(namespaceFile: string, port: number): Promise<Server> {
    return new Promise((resolve, reject) => {
      this.#send(
        { listen: namespaceFile, port },
        { pid: null, started: () => {}, failed: reject, exited: () => {}, listening: resolve },
      );
    });
  }

  /**
   * Makes a connection to `127.0.0.1:port` inside the network namespace held at
   * `namespaceFile`, and hands it to the host, paused: the way in of preview URLs on a
   * root host, with no process of its own (decision 187). Rejects with the error's code
   * (`ECONNREFUSED`: nothing listens there).
   * @example const socket = await spawner.connectIn("/srv/sandboxes/sbx_…/net/ns", 8000);
   */
  connectIn(namespaceFile: string, port: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const failed = (err: Error) =>
        reject(Object.assign(err, { code: /^E[A-Z0-9]+/.exec(err.message)?.[0] ?? "EIO" }));
      this.#send(
        { connect: namespaceFile, port },
        { pid: null, started: () => {}, failed, exited: () => {}, connected: resolve },
      );
    });
  }

  /** A socket the spawner handed over (`listenIn`, `connectIn`), for the job its message names. */
  #handed(message: unknown, handle: unknown): void {
    const id = (message as { job?: unknown } | null)?.job as number;
    const job = this.#jobs.get(id);
    if (handle instanceof Server) {
      if (!job?.listening) return void handle.close();
      this.#finish(id);
      job.listening(handle);
    } else if (handle instanceof Socket) {
      handle.pause();
      if (!job?.connected) return void handle.destroy();
      this.#finish(id);
      job.connected(handle);
    }
  }

  /**
   * Makes FIFOs (mode 0600) at `paths`, each of which must not exist: what `mkfifo` does,
   * without a process started for it.
   */
  makeFifos(paths: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#send(
        { fifos: paths },
        { pid: null, started: () => resolve(), failed: reject, exited: () => {} },
      );
    });
  }

  /** Sends `body` as a new job, answered to `entry`; fails it once the spawner has ended. */
  #send(body: object, entry: Job): void {
    const job = ++this.#nextJob;
    if (!this.#alive) {
      entry.failed(new Error("the spawner has ended"));
      return;
    }
    this.#jobs.set(job, entry);
    this.#holdWhileRunning();
    this.#child.stdin?.write(`${JSON.stringify({ job, ...body })}\n`);
  }

  /** Ends the spawner (the processes it started go on). */
  close(): void {
    this.#child.stdin?.end();
  }

  #answer(line: string): void {
    let answer: Answer;
    try {
      answer = JSON.parse(line) as Answer;
    } catch {
      return;
    }
    const job = this.#jobs.get(answer.job);
    if (!job) return;
    if ("pid" in answer) {
      job.started(answer.pid);
      return;
    }
    // Every other answer is the job's last.
    this.#finish(answer.job);
    if ("made" in answer) job.started(0);
    else if ("error" in answer) job.failed(new Error(answer.error));
    else job.exited(answer);
  }

  /** A job has had its last answer: the spawner no longer holds the host for it. */
  #finish(id: number): void {
    this.#jobs.delete(id);
    this.#holdWhileRunning();
  }

  /**
   * The spawner is gone: what it had not started fails, and a process it started is
   * looked for until it is gone, its exit then unknown (its parent, which knew, is gone).
   */
  #died(): void {
    if (!this.#alive) return;
    this.#alive = false;
    for (const [id, job] of this.#jobs) {
      if (job.pid === null) {
        this.#finish(id);
        job.failed(new Error("the spawner ended before the command started"));
        continue;
      }
      const pid = job.pid;
      const poll = setInterval(() => {
        try {
          process.kill(pid, 0);
        } catch {
          clearInterval(poll);
          this.#finish(id);
          job.exited({ code: null, signal: null });
        }
      }, ORPHAN_POLL_MS);
    }
  }
}

let shared: Spawner | null | undefined;

/**
 * The host's spawner, started at the first call; null where there is none (no
 * `python3`), or once it has died (the host then spawns commands itself).
 */
export function sharedSpawner(): Spawner | null {
  if (shared === undefined) shared = Spawner.start();
  if (shared && !shared.alive) shared = null;
  return shared;
}
