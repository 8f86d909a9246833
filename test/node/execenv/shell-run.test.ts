import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ShellOutputMetadata, ToolOutputSink } from "../../../src/core/output/index.ts";
import { bashEnding, runShell, SandboxClient } from "../../../src/execenv/index.ts";
import { execId, startTestHost, type TestHost } from "../sandbox/harness.ts";

/** A sink replica: just enough of ToolOutput to see what bash's fold calls. */
class RecordingSink {
  text = "";
  captured: ShellOutputMetadata | null = null;
  calls: string[] = [];
  write(text: string) {
    this.calls.push("write");
    this.text += text;
  }
  replace(text: string) {
    this.calls.push("replace");
    this.text = text;
  }
  slide(drop: number, text: string) {
    this.calls.push("slide");
    this.text = this.text.slice(drop) + text;
  }
  capture(meta: ShellOutputMetadata) {
    this.captured = meta;
  }
  image() {}
  usage() {}
  addTools() {}
  terminate() {}
  readonly details = {};
}

let host: TestHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(() => host.close());

function sink(): RecordingSink {
  return new RecordingSink();
}

describe("runShell + bashEnding", () => {
  it("folds a truncated run into the sink and renders the footer", async () => {
    const out = sink();
    const result = await runShell(
      host.client,
      { execId: execId(), command: "seq 1 200000" },
      out,
      new AbortController().signal,
      { reattach: false },
    );
    expect(out.text).toBe(`${Array.from({ length: 2000 }, (_, i) => 198001 + i).join("\n")}\n`);
    expect(out.captured).toMatchObject({ totalLines: 200000, truncated: true });
    expect(out.calls[0]).toBe("replace");
    const ending = bashEnding(result);
    expect(ending.error).toBeNull();
    expect(ending.footer).toBe(
      `\n[Showing lines 198,001–200,000 of 200,000. Full output: ${result.metadata!.spillPath}]`,
    );
  });

  it("gives the real sink the source's window as is: no second window cuts it", async () => {
    // A sink whose own window keeps 5 lines: folding through it would cut the source's 2000.
    const real = new ToolOutputSink({ policy: { retain: "tail", maxBytes: 53_248, maxLines: 5 } });
    const result = await runShell(
      host.client,
      { execId: execId(), command: "seq 1 3000" },
      real.output,
      new AbortController().signal,
      { reattach: false },
    );
    const state = real.snapshot();
    expect(state.content[0]).toEqual({
      type: "text",
      text: `${Array.from({ length: 2000 }, (_, i) => 1001 + i).join("\n")}\n`,
    });
    expect(state.truncation).toEqual(result.metadata);
    expect(state.truncation).toMatchObject({ totalLines: 3000, outputLines: 2000 });
  });

  it("a short successful run has no footer; failures say how they failed", async () => {
    const run = (command: string, timeoutSec?: number) =>
      runShell(
        host.client,
        { execId: execId(), command, timeoutSec },
        sink(),
        new AbortController().signal,
        {
          reattach: false,
        },
      );
    expect(bashEnding(await run("echo hi"))).toEqual({ footer: "", error: null });
    expect(bashEnding(await run("exit 3")).error).toBe("Command exited with code 3");
    expect(bashEnding(await run("sleep 5", 0.2)).error).toMatch(/timed out after 0.2 s/);
  });

  it("a cancel kills the exec and still returns its final output", async () => {
    const out = sink();
    const abort = new AbortController();
    const running = runShell(
      host.client,
      { execId: execId(), command: "echo started; sleep 30" },
      out,
      abort.signal,
      { reattach: false },
    );
    while (!out.text.includes("started")) await new Promise((r) => setTimeout(r, 20));
    abort.abort(new Error("cancelled by the user"));
    const result = await running;
    expect(out.text).toBe("started\n");
    expect(result.exit.error).toMatch(/killed on request/);
  });

  it("rejoins after the stream breaks mid-run, without applying anything twice", async () => {
    let broken = 0;
    const breakingFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method !== "POST" || !String(input).endsWith("/v1/exec") || !res.body) return res;
      broken++;
      const reader = res.body.getReader();
      let passed = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) return controller.close();
          controller.enqueue(value);
          if (++passed === 2) {
            await reader.cancel();
            controller.error(new Error("connection reset"));
          }
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const client = new SandboxClient(host.url, host.token, breakingFetch);
    const out = sink();
    const command = "for i in $(seq 1 40); do echo step $i; sleep 0.01; done";
    const result = await runShell(
      client,
      { execId: execId(), command },
      out,
      new AbortController().signal,
      {
        reattach: false,
      },
    );
    expect(broken).toBe(1);
    expect(result.exit.exitCode).toBe(0);
    expect(out.text).toBe(Array.from({ length: 40 }, (_, i) => `step ${i + 1}\n`).join(""));
  });

  it("reattach to an exec the host does not know is a clear error", async () => {
    await expect(
      runShell(
        host.client,
        { execId: "gone", command: "true" },
        sink(),
        new AbortController().signal,
        {
          reattach: true,
        },
      ),
    ).rejects.toThrow(/no longer knows exec gone/);
  });
});
