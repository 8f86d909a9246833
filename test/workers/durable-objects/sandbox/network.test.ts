// A sandbox's network policy through the Worker (decision 181), against the real sandbox
// host of this project: set at create, shown in the view, replaced by PUT, refused with
// a 400 naming a bad entry, and every attempt of a command in the host's record.
import { describe, expect, it } from "vitest";
import type { SandboxView } from "../../../../src/protocol/index.ts";
import { call, create, freshId, postJson } from "../../worker/helpers.ts";

async function bash(sandbox: string, command: string): Promise<string> {
  const created = await create({
    tool: "bash",
    args: { command },
    sandbox,
    toolCallId: freshId("net"),
  });
  const res = await call(`/v1/invocations/${created.id}/result?wait=30`);
  const result = (await res.json()) as { content: { text: string }[] };
  return result.content.map((c) => c.text).join("");
}

describe("a sandbox's network policy through the Worker", () => {
  it("is set at create, shown in the view, refused where bad, replaced by PUT, and its log is read", async () => {
    const bad = await postJson("/v1/sandboxes", {
      network: { allow: ["ok.example", "no spaces"] },
    });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("network.allow[1]: 'no spaces' is not host, host:port");

    const res = await postJson("/v1/sandboxes", { network: { allow: ["registry.npmjs.org"] } });
    expect(res.status, await res.clone().text()).toBe(201);
    const sbx = (await res.json()) as SandboxView;
    expect(sbx.network).toEqual({ allow: ["registry.npmjs.org"] });

    // A name the list lacks: the proxy's one line reaches the model in the output.
    const out = await bash(sbx.id, "curl -sS http://unlisted.example/; echo");
    expect(out).toContain(
      `toolwire: unlisted.example:80 refused (not on the allow list); sandbox ${sbx.id} allows only: registry.npmjs.org`,
    );

    const put = await call(`/v1/sandboxes/${sbx.id}/network`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ allow: ["*.example.org:8443"] }),
    });
    expect(put.status).toBe(200);
    expect(((await put.json()) as SandboxView).network).toEqual({ allow: ["*.example.org:8443"] });
    const view = (await (await call(`/v1/sandboxes/${sbx.id}`)).json()) as SandboxView;
    expect(view.network).toEqual({ allow: ["*.example.org:8443"] });

    const log = (await (await call(`/v1/sandboxes/${sbx.id}/network`)).json()) as {
      policy: unknown;
      connections: { host: string; port: number; allowed: boolean; why: string }[];
    };
    expect(log.policy).toEqual({ allow: ["*.example.org:8443"] });
    expect(log.connections).toMatchObject([
      { host: "unlisted.example", port: 80, allowed: false, why: "not on the allow list" },
    ]);
    await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" });
  }, 60_000);
});
