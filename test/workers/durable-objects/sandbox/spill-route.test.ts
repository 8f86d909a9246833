// GET /v1/invocations/:id/spill through the real Worker, DO and a real sandbox host
// (sandbox-host.global-setup.ts): the bytes come from the host's spill file.
import { describe, expect, it } from "vitest";
import { mintSubscribeToken } from "../../../../src/worker/subscribe-token.ts";
import {
  type Created,
  call,
  create,
  expectError,
  freshId,
  SUBSCRIBE_SECRET,
} from "../../worker/helpers.ts";

const SEQ_200K_BYTES = 1_288_895;

async function settled(command: string, label = "spill"): Promise<Created> {
  const created = await create({ tool: "bash", args: { command }, toolCallId: freshId(label) });
  const res = await call(`/v1/invocations/${created.id}/result?wait=30`);
  expect(res.status).toBe(200);
  return created;
}

const spill = (id: string, headers: Record<string, string> = {}, query = "", auth = true) =>
  call(`/v1/invocations/${id}/spill${query}`, { headers }, auth);

describe("GET /v1/invocations/:id/spill", () => {
  it("streams the complete output of a 200,000-line command, as plain text, by bearer or token", async () => {
    const created = await settled("seq 1 200000");
    const res = await spill(created.id);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(res.headers.get("content-disposition")).toMatch(/^inline; filename=".+\.log"$/);
    expect(res.headers.get("content-length")).toBe(String(SEQ_200K_BYTES));
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const text = await res.text();
    expect(text.length).toBe(SEQ_200K_BYTES);
    const lines = text.split("\n");
    expect(lines.length).toBe(200_001);
    expect(lines[0]).toBe("1");
    expect(lines[123_455]).toBe("123456");
    expect(lines[199_999]).toBe("200000");

    const viaToken = await spill(
      created.id,
      { Range: "bytes=-7" },
      `?token=${created.subscribeToken}`,
      false,
    );
    expect(viaToken.status).toBe(206);
    expect(await viaToken.text()).toBe("200000\n");
    const download = await spill(created.id, {}, "?download=1");
    expect(download.headers.get("content-disposition")).toMatch(/^attachment; filename=/);
    await download.body?.cancel();
  });

  it("a 1-byte range is a 206 of one byte; a range past the end is a 416 with the size", async () => {
    const created = await settled("seq 1 200000");
    const one = await spill(created.id, { Range: "bytes=0-0" });
    expect(one.status).toBe(206);
    expect(one.headers.get("content-range")).toBe(`bytes 0-0/${SEQ_200K_BYTES}`);
    expect(one.headers.get("content-length")).toBe("1");
    expect(await one.text()).toBe("1");
    const last = await spill(created.id, { Range: `bytes=${SEQ_200K_BYTES - 1}-` });
    expect(last.status).toBe(206);
    expect(await last.text()).toBe("\n");
    const past = await spill(created.id, { Range: `bytes=${SEQ_200K_BYTES}-` });
    expect(past.headers.get("content-range")).toBe(`bytes */${SEQ_200K_BYTES}`);
    expect(await expectError(past, 416, "range_not_satisfiable")).toMatch(/past the end/);
  });

  it("every settled call answers its complete output: a small bash call's, an external call's", async () => {
    const small = await settled("echo fits");
    const res = await spill(small.id);
    expect(res.status).toBe(200);
    // The command's bytes, without the footer the view may carry.
    expect(await res.text()).toBe("fits\n");
    await expectError(await spill("never-created-1"), 404, "not_found");
    // A spill the sandbox removed is test/e2e/full-output.test.ts's (it removes the file
    // from the host's spill folder, which no command can write).
    const external = await create({
      tool: "external",
      args: { name: "agent-side" },
      toolCallId: freshId("spill-external"),
    });
    const written = await call(`/v1/invocations/${external.id}/output`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        calls: [{ write: "from " }, { write: "the agent\n" }],
        end: { isError: false },
      }),
    });
    expect(written.status).toBe(200);
    expect(await (await spill(external.id)).text()).toBe("from the agent\n");
  });

  it("refuses a missing credential, another invocation's token and a write token alike", async () => {
    const created = await settled("seq 1 5000");
    await expectError(await spill(created.id, {}, "", false), 401, "unauthorized");
    const other = await mintSubscribeToken(SUBSCRIBE_SECRET, "someone-else", Date.now());
    await expectError(await spill(created.id, {}, `?token=${other}`, false), 403, "forbidden");
    // A run token opens the run, not its calls' files.
    const inRun = await create({
      tool: "bash",
      args: { command: "seq 1 5000" },
      toolCallId: freshId("spill-run"),
      runId: freshId("run"),
    });
    const runToken = new URL(
      (inRun as Created & { runViewUrl: string }).runViewUrl,
    ).searchParams.get("token");
    await expectError(await spill(inRun.id, {}, `?token=${runToken}`, false), 403, "forbidden");
    const forged = `${created.subscribeToken.slice(0, -2)}xx`;
    await expectError(await spill(created.id, {}, `?token=${forged}`, false), 401, "unauthorized");
  });
});
