/**
 * Servers on this machine a sandbox reaches through its proxy in tests: a registry serving
 * one npm package, and `git http-backend` serving one bare repository. Each listens on
 * loopback, or on the address given (the Docker bridge's, for a container sandbox).
 */
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import path from "node:path";

export interface Upstream {
  server: Server;
  port: number;
  /** The bytes its connections have read (from the proxy) and written so far, and how many are open. */
  traffic(): { read: number; written: number; open: number };
  close(): void;
}

async function listen(server: Server, host = "127.0.0.1"): Promise<Upstream> {
  const sockets = new Set<Socket>();
  const ended = { read: 0, written: 0 };
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => {
      sockets.delete(socket);
      ended.read += socket.bytesRead;
      ended.written += socket.bytesWritten;
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const port = (server.address() as AddressInfo).port;
  const traffic = () => {
    const open = [...sockets];
    return {
      read: open.reduce((n, s) => n + s.bytesRead, ended.read),
      written: open.reduce((n, s) => n + s.bytesWritten, ended.written),
      open: open.length,
    };
  };
  return { server, port, traffic, close: () => server.closeAllConnections() ?? server.close() };
}

/**
 * A registry answering `GET /<name>` (the packument) and the tarball of `<name>@1.0.0`,
 * whose `index.js` exports `answer`; the tarball's URL names the host the request named.
 * `host`: the loopback address it listens on (a sandbox reaches 127.0.0.1 without its
 * proxy, NO_PROXY, so a test whose sandbox names the registry by address uses another).
 */
export async function startTinyRegistry(
  dir: string,
  name: string,
  host = "127.0.0.1",
): Promise<Upstream> {
  const pkg = path.join(dir, "pkg", "package");
  mkdirSync(pkg, { recursive: true });
  writeFileSync(
    path.join(pkg, "package.json"),
    JSON.stringify({ name, version: "1.0.0", main: "index.js" }),
  );
  writeFileSync(path.join(pkg, "index.js"), "exports.answer = 42;\n");
  const tgz = path.join(dir, `${name}-1.0.0.tgz`);
  execFileSync("tar", ["czf", tgz, "-C", path.join(dir, "pkg"), "package"]);
  const tarball = readFileSync(tgz);
  const integrity = `sha512-${createHash("sha512").update(tarball).digest("base64")}`;
  const shasum = createHash("sha1").update(tarball).digest("hex");
  const server = createServer((req, res) => {
    if (req.url === `/${name}`) {
      const url = `http://${req.headers.host}/${name}/-/${name}-1.0.0.tgz`;
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          name,
          "dist-tags": { latest: "1.0.0" },
          versions: {
            "1.0.0": { name, version: "1.0.0", dist: { tarball: url, integrity, shasum } },
          },
        }),
      );
    } else if (req.url === `/${name}/-/${name}-1.0.0.tgz`) {
      res.setHeader("content-type", "application/octet-stream");
      res.end(tarball);
    } else {
      res.statusCode = 404;
      res.end("{}");
    }
  });
  return listen(server, host);
}

/**
 * `git http-backend` behind a small server on `host`, exporting one bare repository,
 * `/repo.git`, made in `dir`: branch `main`, one commit whose `README` reads
 * "hello from git".
 */
export async function startGitRepo(dir: string, host = "127.0.0.1"): Promise<Upstream> {
  const root = path.join(dir, "git");
  mkdirSync(root, { recursive: true });
  const bare = path.join(root, "repo.git");
  execFileSync("git", ["init", "-q", "--bare", "--initial-branch=main", bare]);
  const work = path.join(dir, "git-work");
  execFileSync("git", ["init", "-q", work]);
  writeFileSync(path.join(work, "README"), "hello from git\n");
  const inWork = (...args: string[]) =>
    execFileSync("git", ["-C", work, "-c", "user.name=t", "-c", "user.email=t@t", ...args]);
  inWork("add", "README");
  inWork("commit", "-qm", "first");
  inWork("push", "-q", bare, "HEAD:refs/heads/main");
  return startGitServer(root, host);
}

/** `git http-backend` (CGI) behind a small server, exporting every repository under `root`. */
function startGitServer(root: string, host: string): Promise<Upstream> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://git");
    const cgi = spawn("git", ["http-backend"], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        REQUEST_METHOD: req.method,
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        REMOTE_ADDR: "127.0.0.1",
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let sentHead = false;
    cgi.stdout.on("data", (chunk: Buffer) => {
      if (sentHead) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      sentHead = true;
      for (const line of head.subarray(0, end).toString().split("\r\n")) {
        const [key, ...value] = line.split(":");
        if (key?.toLowerCase() === "status") res.statusCode = Number.parseInt(value.join(":"), 10);
        else if (key) res.setHeader(key, value.join(":").trim());
      }
      res.write(head.subarray(end + 4));
    });
    cgi.stdout.on("end", () => res.end());
  });
  return listen(server, host);
}
