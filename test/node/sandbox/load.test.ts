// 200 concurrent calls, then their 200 spill fetches at once: every result and every
// spill exact (issue 20, "a transient failure is not unreachable").
import { execSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchIdempotent } from "../../../src/execenv/index.ts";
import { execId, fold, startTestHost, type TestHost } from "./harness.ts";

const COMMAND = "seq 1 5000";
const OUTPUT = execSync(COMMAND).toString();

let host: TestHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(() => host.close());

describe("a loaded host", () => {
  it("200 concurrent calls and then 200 concurrent spill fetches are all exact", async () => {
    const ids = Array.from({ length: 200 }, () => execId("load"));
    const results = await Promise.all(
      ids.map((id) => fold(host.client.exec({ execId: id, command: COMMAND }))),
    );
    for (const f of results) {
      expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
      expect(f.metadata).toMatchObject({ totalLines: 5000, totalBytes: OUTPUT.length });
      expect(f.text).toBe(OUTPUT.slice(-f.text.length));
    }
    const bodies = await Promise.all(
      ids.map(async (id) => {
        const res = await fetchIdempotent(fetch, `${host.url}/v1/exec/${id}/spill`, {
          headers: { Authorization: `Bearer ${host.token}` },
        });
        return `${res.status} ${await res.text()}`;
      }),
    );
    expect(bodies.filter((b) => b !== `200 ${OUTPUT}`).length).toBe(0);
  }, 120_000);
});
