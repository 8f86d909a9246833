// A command is one argument to exec: at most 131,071 bytes (MAX_ARG_STRLEN less its NUL).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_COMMAND_BYTES } from "../../../../src/protocol/index.ts";
import { execId, fold, startTestHost, type TestHost } from "../harness.ts";

let host: TestHost;
beforeAll(async () => {
  host = await startTestHost();
});
afterAll(() => host.close());

/** `: xxx…; echo ran`, exactly `bytes` long. */
const commandOf = (bytes: number) => `: ${"x".repeat(bytes - 12)}; echo ran`;

describe("command length", () => {
  it("a command of exactly the limit, and one byte under, runs", async () => {
    expect(MAX_COMMAND_BYTES).toBe(131_071);
    for (const bytes of [MAX_COMMAND_BYTES, MAX_COMMAND_BYTES - 1]) {
      const command = commandOf(bytes);
      expect(Buffer.byteLength(command)).toBe(bytes);
      const f = await fold(host.client.exec({ execId: execId(), command }));
      expect([f.text, f.exit]).toEqual(["ran\n", { kind: "exit", exitCode: 0 }]);
    }
  });

  it("one byte over (or a multibyte command over in bytes) is a 400 that names the limit", async () => {
    for (const command of [commandOf(MAX_COMMAND_BYTES + 1), `echo ${"é".repeat(70_000)}`]) {
      await expect(fold(host.client.exec({ execId: execId(), command }))).rejects.toMatchObject({
        status: 400,
        message: expect.stringMatching(
          /command is [\d,]+ bytes; a command may have at most 131,071 bytes \(the kernel's limit on one argument\)/,
        ),
      });
    }
  });

  it("an env variable over the limit is a 400 too", async () => {
    const env = { BIG: "x".repeat(MAX_COMMAND_BYTES) };
    await expect(
      fold(host.client.exec({ execId: execId(), command: "echo hi", env })),
    ).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/env variable 'BIG'/) });
  });
});
