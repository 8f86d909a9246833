// The same agent and Toolwire in plain Miniflare, from Node: Toolwire's Worker from
// `toolwire/testing`, a real sandbox host, the agent bundled by nothing but Miniflare.
import { fileURLToPath } from "node:url";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import {
  type StartedSandboxHost,
  startSandboxHost,
  TEST_API_TOKEN,
  toolwireWorker,
} from "toolwire/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let host: StartedSandboxHost;
let mf: Miniflare;

beforeAll(async () => {
  host = await startSandboxHost();
  // Miniflare 5 takes Miniflare 4's options through convertV4MiniflareOptions.
  mf = new Miniflare(
    convertV4MiniflareOptions({
      workers: [
        {
          name: "agent",
          modules: true,
          scriptPath: fileURLToPath(new URL("./fixtures/agent.js", import.meta.url)),
          compatibilityDate: "2026-11-01",
          bindings: { TOOLWIRE_TOKEN: TEST_API_TOKEN },
          serviceBindings: { TOOLWIRE: "toolwire" },
        },
        toolwireWorker({ sandboxes: host, sandboxToken: host.token }),
      ],
    }),
  );
});

afterAll(async () => {
  await mf?.dispose();
  await host?.stop();
});

describe("Toolwire in plain Miniflare", () => {
  it("runs a command for a Worker that reaches it over a service binding", async () => {
    const res = await mf.dispatchFetch("http://agent/run", {
      method: "POST",
      body: JSON.stringify({ command: "echo hello from the sandbox" }),
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { text: string; exitCode: number };
    expect(answer.text).toBe("hello from the sandbox\n");
    expect(answer.exitCode).toBe(0);
  });
});
