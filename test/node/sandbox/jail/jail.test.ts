import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SANDBOX_CONFIG, startSandboxHost } from "../../../../sandbox/index.ts";
import { SandboxClient } from "../../../../src/execenv/index.ts";
import { execId, fold, markedProcesses, startTestHost, type TestHost } from "../harness.ts";

let host: TestHost;
let checkout: string;
let checkoutHost: Awaited<ReturnType<typeof startSandboxHost>>;
let checkoutClient: SandboxClient;
const TOKEN = randomBytes(24).toString("hex");

beforeAll(async () => {
  host = await startTestHost();
  // A checkout with its secrets next to the workspace, as `npm start` lays it out.
  checkout = mkdtempSync(path.join(tmpdir(), "toolwire-checkout-"));
  writeFileSync(path.join(checkout, ".dev.vars"), `API_TOKEN=api-secret\nSANDBOX_TOKEN=${TOKEN}\n`);
  checkoutHost = await startSandboxHost({
    ...DEFAULT_SANDBOX_CONFIG,
    rgPath: null,
    killGraceMs: 300,
    token: TOKEN,
    port: 0,
    root: path.join(checkout, "workspace"),
  });
  checkoutClient = new SandboxClient(checkoutHost.url, TOKEN);
});
afterAll(async () => {
  await host.close();
  await checkoutHost.close();
  rmSync(checkout, { recursive: true, force: true });
});

function run(client: SandboxClient, command: string, extra: Record<string, unknown> = {}) {
  return fold(client.exec({ execId: execId(), command, ...extra }));
}

async function waitGone(mark: string, ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  let alive = markedProcesses(mark);
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    alive = markedProcesses(mark);
  }
  for (const pid of alive) process.kill(pid, "SIGKILL");
  return alive;
}

describe("jail: nothing of the host is visible", () => {
  it("the host's environment and token are not readable, through /proc or the command's env", async () => {
    const f = await run(
      checkoutClient,
      "cat /proc/$PPID/environ /proc/1/environ 2>/dev/null | tr '\\0' '\\n' | grep -c TOKEN; grep -l TOKEN /proc/*/environ 2>/dev/null | wc -l; env | cut -d= -f1 | sort | tr '\\n' ' '",
    );
    expect(f.text).not.toContain(TOKEN);
    expect(f.text).toBe("0\n0\nHOME LANG PATH PWD SHLVL TMPDIR _ ");
  });

  it("the checkout's .dev.vars is not there", async () => {
    const f = await run(checkoutClient, `cat ../.dev.vars; cat ${checkout}/.dev.vars; ls ..`);
    expect(f.text).not.toContain("api-secret");
    expect(f.text).toContain(`cat: ../.dev.vars: No such file or directory`);
    expect(f.text).toContain(`cat: ${checkout}/.dev.vars: No such file or directory`);
    expect(f.text).toContain("workspace\n");
    expect(f.exit?.exitCode).toBe(0);
  });

  it("other processes of the host are invisible: ps shows only the jail", async () => {
    // ps runs alone, so no pipeline stage can be caught between fork and exec (a forked
    // stage still shows as "bash"); the list is sorted after ps has exited.
    const f = await run(
      host.client,
      "ps -e -o comm= > /tmp/ps.txt; sort /tmp/ps.txt | tr '\\n' ' '",
    );
    expect(f.text).toBe("bash bwrap ps ");
  });

  it("/etc/shadow is masked", async () => {
    const f = await run(host.client, "cat /etc/shadow");
    expect(f.text).toBe("cat: /etc/shadow: Permission denied\n");
  });
});

describe("jail: the workspace is the only writable path", () => {
  it("writes to /, /usr, /etc and the host's HOME fail; /tmp is private; the workspace works", async () => {
    const name = `escape-${randomBytes(4).toString("hex")}`;
    const f = await run(
      host.client,
      [
        `touch /${name}`,
        `touch /usr/${name}`,
        `touch /etc/${name}`,
        `touch /root/${name}`,
        `echo private > /tmp/${name} && cat /tmp/${name}`,
        `echo mine > ${name} && cat ${name}`,
      ].join("; "),
    );
    expect(f.text).toBe(
      [
        `touch: cannot touch '/${name}': Read-only file system`,
        `touch: cannot touch '/usr/${name}': Read-only file system`,
        `touch: cannot touch '/etc/${name}': Read-only file system`,
        `touch: cannot touch '/root/${name}': No such file or directory`,
        "private",
        "mine",
        "",
      ].join("\n"),
    );
    for (const outside of [`/${name}`, `/usr/${name}`, `/etc/${name}`, `/tmp/${name}`]) {
      expect(existsSync(outside)).toBe(false);
    }
    expect(existsSync(path.join(host.root, name))).toBe(true);
  });

  it("writes next to the workspace never reach the host's checkout", async () => {
    // This checkout lies under /tmp, so its path exists only in the jail's private /tmp.
    await run(checkoutClient, `echo x > ../planted; echo x > ${checkout}/planted`);
    expect(existsSync(path.join(checkout, "planted"))).toBe(false);
    const again = await run(checkoutClient, "cat ../planted");
    expect(again.text).toBe("cat: ../planted: No such file or directory\n");
  });

  it("remounting the system read-write is refused (no capabilities)", async () => {
    const f = await run(host.client, "mount -o remount,rw / 2>&1; unshare -U true 2>&1; echo done");
    expect(f.text).toMatch(/must be superuser|Operation not permitted|permission denied/i);
    expect(f.text).toMatch(/unshare failed|Operation not permitted|No space left/);
    expect(f.text.endsWith("done\n")).toBe(true);
  });
});

describe("jail: nothing outlives its command", () => {
  it("a setsid background process dies when its command exits", async () => {
    const id = execId();
    const f = await run(host.client, "setsid sleep 300 > /dev/null 2>&1 & disown; echo left", {
      execId: id,
      env: { TOOLWIRE_MARK: id },
    });
    expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
    expect(await waitGone(id, 2000)).toEqual([]);
  });

  it("a double-forked setsid survivor dies at the timeout", async () => {
    const id = execId();
    const f = await fold(
      host.client.exec({
        execId: id,
        command:
          "(setsid sh -c 'trap \"\" TERM; sleep 300' > /dev/null 2>&1 &); echo forked; sleep 300",
        env: { TOOLWIRE_MARK: id },
        timeoutSec: 0.5,
      }),
    );
    expect(f.text).toBe("forked\n");
    expect(f.exit?.error).toMatch(/timed out after 0.5 s/);
    expect(await waitGone(id, 2000)).toEqual([]);
  });
});

describe("jail: no network unless configured", () => {
  let worker: Server;
  let workerPort: number;
  beforeAll(async () => {
    worker = createServer((socket) => {
      // The probe closes its end at once, so the answer may meet a reset: expected here.
      socket.on("error", () => {});
      socket.end("worker\n");
    });
    await new Promise<void>((resolve) => worker.listen(0, "127.0.0.1", resolve));
    workerPort = (worker.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => worker.close(() => resolve())));

  const probe = (port: number) =>
    `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo "${port} open" || echo "${port} refused"`;

  it("the Worker's and the host's own ports on loopback are unreachable", async () => {
    const hostPort = Number(new URL(host.url).port);
    const f = await run(host.client, `${probe(workerPort)}; ${probe(hostPort)}`);
    expect(f.text).toBe(`${workerPort} refused\n${hostPort} refused\n`);
  });

  it("with SANDBOX_NETWORK=on the same probe connects (the test can tell)", async () => {
    const open = await startTestHost({ network: true });
    try {
      const f = await run(open.client, probe(workerPort));
      expect(f.text).toBe(`${workerPort} open\n`);
    } finally {
      await open.close();
    }
  });
});
