// The footer's path opens with the read and grep tools, with both search engines; a
// search with nothing to search says so in Toolwire's words (issue 19 item 7).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findRipgrep } from "../../../../sandbox/files/ripgrep.ts";
import { execId, fold, startTestHost, type TestHost } from "../harness.ts";

const rg = findRipgrep();
if (!rg) throw new Error("these tests need ripgrep ('rg') on PATH (apt-get install ripgrep)");

for (const engine of ["walker", "ripgrep"] as const) {
  describe(`the spill through the file tools (${engine})`, () => {
    let host: TestHost;
    let spillPath: string;
    beforeAll(async () => {
      host = await startTestHost({ rgPath: engine === "ripgrep" ? rg : null });
      const f = await fold(host.client.exec({ execId: execId(), command: "seq 1 5000" }));
      spillPath = f.metadata!.spillPath!;
    });
    afterAll(() => host.close());

    it("read and grep open the footer's path; grep of the spill folder finds it too", async () => {
      expect(spillPath).toMatch(/^\/toolwire\/spill\/.+\.log$/);
      const r = await host.client.read({ path: spillPath, offset: 4999 });
      expect(r).toMatchObject({ path: spillPath, totalLines: 5000 });
      expect(r.lines).toEqual(["4999", "5000"]);
      const one = await host.client.grep({ pattern: "^4321$", path: spillPath });
      expect(one.matches).toEqual([{ path: spillPath, line: 4321, text: "4321" }]);
      const all = await host.client.grep({ pattern: "^4321$", path: "/toolwire/spill" });
      expect(all.matches).toContainEqual({ path: spillPath, line: 4321, text: "4321" });
    });

    it("grep's context works in a spill as in a workspace file", async () => {
      const r = await host.client.grep({ pattern: "^4321$", path: spillPath, context: 2 });
      expect(r.matches).toEqual([
        {
          path: spillPath,
          line: 4321,
          text: "4321",
          before: [
            { line: 4319, text: "4319" },
            { line: 4320, text: "4320" },
          ],
          after: [
            { line: 4322, text: "4322" },
            { line: 4323, text: "4323" },
          ],
        },
      ]);
    });

    it("a grep of the workspace does not search the spill (the footer says to pass its path)", async () => {
      await fold(host.client.exec({ execId: execId(), command: "echo 4321 > found.txt" }));
      const g = await host.client.grep({ pattern: "^4321$" });
      expect(g.matches).toEqual([{ path: "found.txt", line: 1, text: "4321" }]);
    });

    it("names that leave the spill folder are 404s that name only the path given", async () => {
      for (const bad of [
        "/toolwire/spill/../../etc/passwd",
        "/toolwire/spill/a/b.log",
        "/toolwire/spill/.x",
      ]) {
        await expect(host.client.read({ path: bad })).rejects.toMatchObject({ status: 404 });
        await expect(host.client.grep({ pattern: "root", path: bad })).rejects.toMatchObject({
          status: 404,
        });
      }
    });

    it("an empty search says there were no files to search, in Toolwire's words", async () => {
      const empty = await startTestHost({ rgPath: engine === "ripgrep" ? rg : null });
      try {
        const err = await empty.client.grep({ pattern: "x" }).catch((e: unknown) => e);
        expect(err).toMatchObject({ status: 404 });
        const message = (err as Error).message;
        expect(message).toMatch(/no files to search in the workspace/);
        expect(message).not.toMatch(/ripgrep|No files were searched/);
      } finally {
        await empty.close();
      }
    });
  });
}
