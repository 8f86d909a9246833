// Initial files in POST /v1/sandboxes (docs/sandboxes.md): a `files` map and a base64
// `tar`, extracted as an upload is, against the real sandbox host of this project.
import { describe, expect, it } from "vitest";
import type { SandboxView } from "../../../../src/protocol/index.ts";
import { MAX_BODY_BYTES } from "../../../../src/worker/body.ts";
import { call, create, expectError, freshId, postJson } from "../../worker/helpers.ts";

async function bash(sandbox: string, command: string): Promise<string> {
  const created = await create({
    tool: "bash",
    args: { command },
    sandbox,
    toolCallId: freshId("init"),
  });
  const res = await call(`/v1/invocations/${created.id}/result?wait=30`);
  const result = (await res.json()) as { content: { text: string }[] };
  return result.content.map((c) => c.text).join("");
}

async function listed(): Promise<SandboxView[]> {
  return ((await (await call("/v1/sandboxes")).json()) as { sandboxes: SandboxView[] }).sandboxes;
}

function base64(bytes: Uint8Array): string {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text);
}

describe("initial files in POST /v1/sandboxes", () => {
  it("writes a files map into the workspace, folders made, before the first call", async () => {
    const res = await postJson("/v1/sandboxes", {
      files: {
        "README.md": "# repo\n",
        "src/main.ts": 'export const x = "é";\n',
        [`${"d".repeat(120)}/${"f".repeat(90)}.txt`]: "long name\n",
      },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const sbx = (await res.json()) as SandboxView;
    expect(await bash(sbx.id, "find . -type f | sort | cut -c1-20; cat src/main.ts")).toBe(
      `./README.md\n./${"d".repeat(18)}\n./src/main.ts\nexport const x = "é";\n`,
    );
    await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" });
  }, 60_000);

  it("extracts a base64 tar (here, another sandbox's download), then the files map over it", async () => {
    const first = (await (
      await postJson("/v1/sandboxes", { files: { "a/one.txt": "1\n", "a/two.txt": "2\n" } })
    ).json()) as SandboxView;
    const tar = new Uint8Array(
      await (await call(`/v1/sandboxes/${first.id}/files?path=a`)).arrayBuffer(),
    );
    const res = await postJson("/v1/sandboxes", {
      tar: base64(tar),
      files: { "a/two.txt": "replaced\n" },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const second = (await res.json()) as SandboxView;
    expect(await bash(second.id, "find . -type f | sort; cat a/one.txt a/two.txt")).toBe(
      "./a/one.txt\n./a/two.txt\n1\nreplaced\n",
    );
    for (const s of [first, second]) await call(`/v1/sandboxes/${s.id}`, { method: "DELETE" });
  }, 60_000);

  it("refuses a path that leaves the workspace with a 400 naming it, creating nothing", async () => {
    const before = (await listed()).length;
    for (const bad of ["../x", "/etc/passwd", "a//b", "a/./b", "", "x\0y"]) {
      const res = await postJson("/v1/sandboxes", { files: { ok: "1", [bad]: "x" } });
      expect(await expectError(res, 400, "bad_request")).toContain(
        `body.files: ${JSON.stringify(bad)}`,
      );
    }
    expect((await listed()).length).toBe(before);
  });

  it("refuses a ustar name of 256 bytes and takes one of 255", async () => {
    const at = `${"p".repeat(154)}/${"n".repeat(100)}`;
    expect(new TextEncoder().encode(at).length).toBe(255);
    const ok = await postJson("/v1/sandboxes", { files: { [at]: "fits\n" } });
    expect(ok.status, await ok.clone().text()).toBe(201);
    await call(`/v1/sandboxes/${((await ok.json()) as SandboxView).id}`, { method: "DELETE" });
    const over = await postJson("/v1/sandboxes", { files: { [`${at}x`]: "no\n" } });
    expect(await expectError(over, 400, "bad_request")).toMatch(/longer than 255 bytes/);
  }, 60_000);

  it("a tar the host refuses ends the new sandbox: the create answers the host's 400 and keeps nothing", async () => {
    const res = await postJson("/v1/sandboxes", { tar: btoa("this is not a tar archive") });
    const message = await expectError(res, 400, "bad_request");
    expect(message).toMatch(
      /^body\.tar: .*nothing was kept \(the sandbox sbx_default_[0-9a-f]{20} was removed\)$/,
    );
    const id = /sbx_default_[0-9a-f]{20}/.exec(message)![0];
    expect(((await (await call(`/v1/sandboxes/${id}`)).json()) as SandboxView).status).toBe(
      "deleted",
    );
  });

  it("refuses a tar that is not base64, creating nothing", async () => {
    const res = await postJson("/v1/sandboxes", { tar: "not base64 !" });
    expect(await expectError(res, 400, "bad_request")).toMatch(/body\.tar/);
  });

  it("takes a create body of exactly 1 MiB and refuses one byte more (413), creating nothing", async () => {
    const body = (n: number) => JSON.stringify({ files: { "big.txt": "a".repeat(n) } });
    const fixed = body(0).length;
    const at = await call("/v1/sandboxes", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: body(MAX_BODY_BYTES - fixed),
    });
    expect(at.status, await at.clone().text()).toBe(201);
    const sbx = (await at.json()) as SandboxView;
    expect(await bash(sbx.id, "wc -c < big.txt")).toBe(`${MAX_BODY_BYTES - fixed}\n`);
    await call(`/v1/sandboxes/${sbx.id}`, { method: "DELETE" });
    const before = (await listed()).length;
    const over = await call("/v1/sandboxes", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: body(MAX_BODY_BYTES - fixed + 1),
    });
    await expectError(over, 413, "too_large");
    expect((await listed()).length).toBe(before);
  }, 60_000);
});
