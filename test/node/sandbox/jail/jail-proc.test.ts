// SANDBOX_JAIL_PROC (decision 145): the jail's /proc. `host` is what a container whose
// runtime masks /proc gets; here it runs on the host machine, where it can be checked
// against the real host process: its environment (the token) and command line must be
// out of every command's reach.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configFromEnv } from "../../../../sandbox/config.ts";
import { execId, fold, startTestHost, type TestHost } from "../harness.ts";

let hostProc: TestHost;
let newProc: TestHost;

beforeAll(async () => {
  hostProc = await startTestHost({ jailProc: "host" });
  newProc = await startTestHost({ jailProc: "auto" });
});
afterAll(async () => {
  await hostProc.close();
  await newProc.close();
});

async function run(host: TestHost, command: string): Promise<string> {
  return (await fold(host.client.exec({ execId: execId(), command }))).text;
}

describe("the jail's /proc", () => {
  it("host: the host's /proc read-only, with this host process, its parent and PID 1 hidden", async () => {
    const out = await run(
      hostProc,
      [
        `ls /proc/${process.pid} 2>/dev/null | wc -l`,
        `ls /proc/${process.ppid} 2>/dev/null | wc -l`,
        "ls /proc/1 2>/dev/null | wc -l",
        `cat /proc/${process.pid}/environ >/dev/null 2>&1; echo read=$?`,
        "(echo x 2>/dev/null >/proc/sys/kernel/hostname) 2>/dev/null && echo wrote || echo refused",
        "test -e /proc/self/status && echo self-ok",
      ].join("; "),
    );
    expect(out).toBe("0\n0\n0\nread=1\nrefused\nself-ok\n");
  });

  it("auto: where a /proc of its own can be mounted (here), the jail gets one", async () => {
    expect(await run(newProc, "ls /proc | grep -cE '^[0-9]+$'")).toMatch(/^[1-5]\n$/);
    expect(await run(hostProc, "ls /proc | grep -cE '^[0-9]+$'")).not.toMatch(/^[1-5]\n$/);
  });

  it("reads SANDBOX_JAIL_PROC as new, host or auto, and refuses anything else", () => {
    const env = { SANDBOX_TOKEN: "0123456789abcdef0123" };
    expect(configFromEnv(env).jailProc).toBe("new");
    for (const v of ["new", "host", "auto"] as const) {
      expect(configFromEnv({ ...env, SANDBOX_JAIL_PROC: v }).jailProc).toBe(v);
    }
    expect(() => configFromEnv({ ...env, SANDBOX_JAIL_PROC: "bind" })).toThrow(
      /SANDBOX_JAIL_PROC must be new or host or auto, got 'bind'/,
    );
  });
});
