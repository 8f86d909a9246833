// Idempotent producer calls through a real loopback proxy that loses every other
// answer to POST …/output, against the real Worker and Durable Object (wrangler dev).
import { afterEach, describe, expect, inject, it } from "vitest";
import { ToolwireClient, ToolwireError } from "../../src/client/index.ts";
import { type LossyProxy, startLossyProxy } from "../support/e2e/lossy-proxy.ts";

const WRITES = 40;
const direct = new ToolwireClient({ baseUrl: inject("apiUrl"), token: inject("apiToken") });
let proxy: LossyProxy | null = null;

afterEach(async () => {
  await proxy?.close();
  proxy = null;
});

/** A proxy that cuts the answer of every other producer call (the 1st, 3rd, 5th, …). */
async function everyOtherOutputLost(): Promise<LossyProxy> {
  let outputs = 0;
  return startLossyProxy(inject("apiUrl"), (req) => {
    if (req.method !== "POST" || !req.url?.endsWith("/output")) return false;
    return outputs++ % 2 === 0;
  });
}

async function resultText(id: string): Promise<string> {
  const poll = await direct.result(id, { wait: 10 });
  if (poll.status !== "settled") throw new Error("the invocation did not settle");
  const block = poll.result.content[0];
  return block?.type === "text" ? block.text : "";
}

const lines = Array.from({ length: WRITES }, (_, i) => `line ${i}\n`);

describe("producer calls through a proxy that loses every other answer", () => {
  it("with the client's producer (seq + retry): every write lands exactly once, in order", async () => {
    proxy = await everyOtherOutputLost();
    const client = new ToolwireClient({ baseUrl: proxy.url, token: inject("apiToken") });
    const inv = await direct.createInvocation({ tool: "external", args: { name: "lossy" } });
    const out = client.producer(inv.id, { retry: { initialMs: 5, maxMs: 20 } });
    for (const line of lines) await out.send([{ write: line }]);
    const ended = await out.send([], { isError: false });
    expect(ended.status).toBe("settled");
    expect(out.nextSeq).toBe(WRITES + 1);
    expect(proxy.dropped).toBe(WRITES + 1);
    expect(proxy.passed).toBe(WRITES + 1);
    expect(await resultText(inv.id)).toBe(lines.join(""));
  });

  it("without seq the same retries apply writes twice (why seq exists)", async () => {
    proxy = await everyOtherOutputLost();
    const client = new ToolwireClient({ baseUrl: proxy.url, token: inject("apiToken") });
    const inv = await direct.createInvocation({ tool: "external", args: { name: "lossy" } });
    const naive = async (line: string) => {
      for (;;) {
        try {
          return await client.output(inv.id, [{ write: line }]);
        } catch (error) {
          if (!(error instanceof ToolwireError) || error.permanent) throw error;
        }
      }
    };
    for (const line of lines.slice(0, 5)) await naive(line);
    await direct.output(inv.id, [], { isError: false });
    expect(await resultText(inv.id)).toBe(
      lines
        .slice(0, 5)
        .flatMap((l) => [l, l])
        .join(""),
    );
  });
});
