// The real `toolwire` CLI (bin/toolwire, run by Node 22) against the real Worker,
// Durable Object and sandbox host started by global-setup.ts.
import { describe, expect, inject, it } from "vitest";
import { ToolwireClient } from "../../src/client/index.ts";
import { toolwire } from "../support/e2e/toolwire-cli.ts";

const api = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });

describe("toolwire CLI", () => {
  it("runs bash, prints its output and exits 0", async () => {
    const run = await toolwire(["run", "bash", "--command", "echo hello; printf 'a\\nb\\n'"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("hello\na\nb\n");
  });

  it("exits with the command's own status when it fails, after printing what it wrote", async () => {
    const run = await toolwire(["run", "bash", "--command", "echo partial; exit 3"]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^\[toolwire\] failed \(exit 3\) in \d+\.\d s\n$/);
    expect(run.stdout).toMatch(/^partial\n/);
    expect(run.stdout).toContain("exited with code 3");
  });

  it("prints a sliding window live without printing any line twice", async () => {
    // 4,000 lines in bursts of 400 through a 2,000-line window.
    const command =
      "for i in $(seq 1 4000); do echo $i; if [ $((i % 400)) -eq 0 ]; then sleep 0.3; fi; done";
    const run = await toolwire(["run", "bash", "--command", command]);
    expect(run.code).toBe(0);
    const numbers = run.stdout.split("\n").filter((l) => /^\d+$/.test(l));
    expect(numbers).toEqual(Array.from({ length: 4000 }, (_, i) => String(i + 1)));
    // The end says, in words, what the stored result keeps.
    expect(run.stderr).toMatch(
      /Showing 2,000 of 4,000 lines \(2,000-line limit\)\. The whole output: toolwire output call_\w+ > call_\w+\.log\n$/,
    );
    expect(run.stdout).not.toContain("[To see");
  });

  it("prints every line of repetitive output, though the window looks the same as it slides", async () => {
    const command =
      "for i in $(seq 1 3000); do echo ok; if [ $((i % 300)) -eq 0 ]; then sleep 0.2; fi; done";
    const run = await toolwire(["run", "bash", "--command", command]);
    expect(run.code).toBe(0);
    expect(run.stderr).not.toContain("not shown");
    expect(run.stdout.split("\n").filter((l) => l === "ok")).toHaveLength(3000);
  });

  it("cancels the invocation on Ctrl-C, keeping what it printed", async () => {
    let interrupted = false;
    const id = `call_cli_cancel_${Date.now()}`;
    const run = await toolwire(
      ["run", "--id", id, "bash", "--command", "echo started; sleep 30"],
      {},
      (text, child) => {
        if (!interrupted && text.includes("started")) {
          interrupted = true;
          child.kill("SIGINT");
        }
      },
    );
    expect(run.code).toBe(130);
    expect(run.stdout).toMatch(/^started\n/);
    expect(run.stderr).toContain("[toolwire] cancelling…");
    expect(run.stderr).toMatch(/\[toolwire\] cancelled in \d+\.\d s\n$/);
    const info = await api.get(id);
    expect(info).toMatchObject({ status: "settled", cancelled: true, isError: true });
  });

  it("takes typed tool arguments from --key value pairs and --args JSON", async () => {
    const run = await toolwire(["run", "emit", "--lines", "3", "--args", '{"text":"ok"}']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("1 ok\n2 ok\n3 ok\n");
  });

  it("watches an invocation started elsewhere and prints its result", async () => {
    const created = await api.createInvocation({
      tool: "bash",
      args: { command: "for i in 1 2 3; do echo step $i; sleep 0.2; done" },
    });
    const watch = await toolwire(["watch", created.id]);
    expect(watch.code).toBe(0);
    expect(watch.stdout).toBe("step 1\nstep 2\nstep 3\n");

    const result = await toolwire(["result", created.id]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("step 1\nstep 2\nstep 3\n");
    // Over SSE too, once settled: the whole output, then the end.
    const sse = await toolwire(["watch", "--sse", created.id]);
    expect(sse.code).toBe(0);
    expect(sse.stdout).toBe("step 1\nstep 2\nstep 3\n");
    const json = await toolwire(["result", created.id, "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ isError: false, content: [{ type: "text" }] });
  });

  it("says when a result is not ready yet (exit 4)", async () => {
    const created = await api.createInvocation({ tool: "bash", args: { command: "sleep 20" } });
    const run = await toolwire(["result", created.id, "--wait", "0"]);
    expect(run.code).toBe(4);
    expect(run.stderr).toContain(`${created.id} is still running`);
    await api.cancel(created.id);
  });

  it("lists the tools", async () => {
    const run = await toolwire(["tools"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^bash {2}/m);
    expect(run.stdout).toContain("    --command <string>");
    for (const name of ["write", "edit", "ls", "find"])
      expect(run.stdout).toMatch(new RegExp(`^${name} {2}`, "m"));
  });

  it("explains a wrong token, an unknown tool and an unknown invocation", async () => {
    const badToken = await toolwire(["tools"], { TOOLWIRE_TOKEN: "not-the-token" });
    expect(badToken.code).toBe(3);
    expect(badToken.stderr).toBe(
      "toolwire: the bearer token is not the configured API_TOKEN. Check TOOLWIRE_TOKEN (or --token).\n",
    );

    const unknownTool = await toolwire(["run", "nope", "--x", "1"]);
    expect(unknownTool.code).toBe(2);
    expect(unknownTool.stderr).toContain('Unknown tool "nope". Tools: bash, read, grep, glob');
    // Only the tools a person would use: the built-in examples are left out.
    expect(unknownTool.stderr).not.toMatch(/\b(emit|steps|report)\b/);

    const unknownId = await toolwire(["watch", "call_doesnotexist"]);
    expect(unknownId.code).toBe(2);
    expect(unknownId.stderr).toMatch(/^toolwire: .*invocation/i);
  });

  it("ends with a newline after (no output) and after a failing command's last line, on a pipe", async () => {
    const quiet = await toolwire(["run", "bash", "--command", "true"]);
    expect([quiet.code, quiet.stdout]).toEqual([0, "(no output)\n"]);
    const failing = await toolwire(["run", "bash", "--command", "printf 'last'; exit 3"]);
    expect(failing.code).toBe(3);
    expect(failing.stdout).toMatch(/\n$/);
    expect(failing.stdout.split("\n").at(-2)).toMatch(/3/);
  });

  it("files a call under a run with --run-id, and link prints fresh links that open", async () => {
    const runId = `cli-run-${Date.now()}`;
    const run = await toolwire([
      "run",
      "--run-id",
      runId,
      "--id",
      `${runId}-a`,
      "bash",
      "--command",
      "echo in-run",
    ]);
    expect([run.code, run.stdout]).toEqual([0, "in-run\n"]);
    const res = await fetch(`${inject("apiUrl")}/v1/runs/${runId}`, {
      headers: { Authorization: `Bearer ${inject("apiToken")}` },
    });
    const listed = (await res.json()) as { calls: { toolCallId: string }[] };
    expect(listed.calls.map((call) => call.toolCallId)).toEqual([`${runId}-a`]);

    const link = await toolwire(["link", `${runId}-a`]);
    expect(link.code).toBe(0);
    expect(link.stdout).toMatch(new RegExp(`^http://.*/view/${runId}-a\\?token=v1\\.[^\n]+\n$`));
    expect((await fetch(link.stdout.trim())).status).toBe(200);
    const runLink = await toolwire(["link", "--run", runId]);
    expect(runLink.code).toBe(0);
    expect((await fetch(runLink.stdout.trim())).status).toBe(200);
    const unknown = await toolwire(["link", "call_doesnotexist"]);
    expect(unknown.code).toBe(2);
  });

  it("run --sandbox new makes a sandbox, runs there and prints its id; a later run names it", async () => {
    const first = await toolwire([
      "run",
      "--sandbox",
      "new",
      "bash",
      "--command",
      "echo made-here > own.txt && pwd",
    ]);
    expect(first.code, first.stderr).toBe(0);
    const id = /Sandbox: (sbx_default_[0-9a-f]{20})\n/.exec(first.stderr)?.[1];
    expect(id, first.stderr).toBeDefined();
    expect(first.stdout).toBe("/workspace\n");
    const again = await toolwire([
      "run",
      "--sandbox",
      id as string,
      "bash",
      "--command",
      "cat own.txt",
    ]);
    expect(again.stdout).toBe("made-here\n");
    const elsewhere = await toolwire(["run", "bash", "--command", "cat own.txt"]);
    expect(elsewhere.code).not.toBe(0);
    expect((await toolwire(["sandbox", "rm", id as string])).code).toBe(0);
  });
});
