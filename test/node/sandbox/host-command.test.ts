// The host's own commands (decision 277): run by the real python3 spawner, answered as
// `execFile` answers them, so `mount`, `mkfs.ext4` and `findmnt` callers read the same.
import { describe, expect, it } from "vitest";
import { sharedSpawner } from "../../../sandbox/exec/spawner.ts";
import { CommandFailed, runCommand } from "../../../sandbox/host-command.ts";

describe("runCommand", () => {
  it("is started by the spawner, not forked from the host, and answers what it printed", async () => {
    const spawner = sharedSpawner();
    if (!spawner) throw new Error("these tests need python3 on PATH");
    const { stdout, stderr } = await runCommand("sh", ["-c", 'echo "$PPID"; echo note >&2']);
    expect(stdout).toBe(`${spawner.pid}\n`);
    expect(stderr).toBe("note\n");
  });

  it("a command that fails rejects with its stderr, and a message naming it and how it ended", async () => {
    const failed = await runCommand("sh", [
      "-c",
      "echo partial; echo 'no such mount' >&2; exit 32",
    ]).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(CommandFailed);
    expect(failed).toMatchObject({ stdout: "partial\n", stderr: "no such mount\n" });
    expect((failed as Error).message).toBe(
      "sh -c echo partial; echo 'no such mount' >&2; exit 32 exited 32\nno such mount\n",
    );
  });

  it("a command that is not there rejects, saying so", async () => {
    const failed = await runCommand("no-such-command-toolwire", ["x"]).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(CommandFailed);
    expect((failed as CommandFailed).message).toMatch(
      /^could not start no-such-command-toolwire x: ENOENT/,
    );
    expect((failed as CommandFailed).stderr).toMatch(/ENOENT/);
  });

  it("a spawner that has ended: the host runs the command itself (a host stopping still unmounts)", async () => {
    const spawner = sharedSpawner();
    if (!spawner) throw new Error("these tests need python3 on PATH");
    process.kill(spawner.pid!, "SIGKILL");
    const { stdout } = await runCommand("sh", ["-c", 'echo "$PPID"']);
    expect(stdout).toBe(`${process.pid}\n`);
  });
});
