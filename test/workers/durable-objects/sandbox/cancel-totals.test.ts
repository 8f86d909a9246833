// A call cancelled while its command floods output settles with totals that are its
// spill's bytes and lines, exactly: through the real Worker, DO storage and a real
// sandbox host (sandbox-host.global-setup.ts), the result long-polled and the spill
// fetched from the host as a user would.
import { expect, it } from "vitest";
import { call, create, freshId, postJson, viewWhen } from "../../worker/helpers.ts";

interface Totals {
  totalBytes: number;
  totalLines: number;
  spillPath?: string;
}

/** Lines as the totals count them: newlines, plus one for a last line without one. */
function linesOf(bytes: Uint8Array): number {
  let newlines = 0;
  for (let at = bytes.indexOf(10); at >= 0; at = bytes.indexOf(10, at + 1)) newlines++;
  return newlines + (bytes.length > 0 && bytes[bytes.length - 1] !== 10 ? 1 : 0);
}

it("a cancel mid-flood settles with the spill's bytes and lines as its totals", async () => {
  for (let round = 0; round < 3; round++) {
    const created = await create({
      tool: "bash",
      args: { command: "seq 1 1000000000" },
      toolCallId: freshId("cancel-totals"),
    });
    await viewWhen<{ state: { truncation?: Totals } | null }>(
      created.id,
      (v) => (v.state?.truncation?.totalBytes ?? 0) > 2_000_000,
    );
    const cancelled = await postJson(`/v1/invocations/${created.id}/cancel`, {});
    expect(cancelled.status).toBe(200);
    const res = await call(`/v1/invocations/${created.id}/result?wait=30`);
    expect(res.status).toBe(200);
    const result = (await res.json()) as { isError: boolean; truncation: Totals };
    expect(result.isError).toBe(true);
    const totals = result.truncation;
    expect(totals.spillPath).toMatch(/^\/toolwire\/spill\/.+\.log$/);
    const spill = await call(`/v1/invocations/${created.id}/spill`);
    expect(spill.status).toBe(200);
    const bytes = new Uint8Array(await spill.arrayBuffer());
    expect({ bytes: totals.totalBytes, lines: totals.totalLines }).toEqual({
      bytes: bytes.length,
      lines: linesOf(bytes),
    });
    expect(totals.totalBytes).toBeGreaterThan(2_000_000);
  }
}, 90_000);
