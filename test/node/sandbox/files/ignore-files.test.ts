// grep and glob agree: the walker honours .gitignore/.ignore/.rgignore as ripgrep does.
// Both engines search the same tree; each answer is compared with the expected list.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findRipgrep } from "../../../../sandbox/files/ripgrep.ts";
import { startTestHost, type TestHost } from "../harness.ts";

const FILES: Record<string, string> = {
  ".gitignore": "*.log\nbuild/\n!keep.log\n/rootonly.txt\n",
  ".rgignore": "vendor/\n",
  "src/.gitignore": "gen/\n*.tmp\n",
  "src/.ignore": "secret.ts\n",
  "src/nested/.gitignore": "!b.tmp\n",
  "src/a.ts": "needle\n",
  "src/secret.ts": "needle\n",
  "src/b.tmp": "needle\n",
  "src/nested/b.tmp": "needle\n",
  "src/nested/c.ts": "needle\n",
  "src/gen/x.ts": "needle\n",
  "keep.log": "needle\n",
  "drop.log": "needle\n",
  "build/out.ts": "needle\n",
  "vendor/v.ts": "needle\n",
  "rootonly.txt": "needle\n",
  "sub/rootonly.txt": "needle\n",
  "docs/readme.md": "needle\n",
};

const VISIBLE = [
  "docs/readme.md",
  "keep.log",
  "src/a.ts",
  "src/nested/b.tmp",
  "src/nested/c.ts",
  "sub/rootonly.txt",
];

const rg = findRipgrep();
const hosts: Record<string, TestHost> = {};

beforeAll(async () => {
  expect(rg, "ripgrep must be installed (apt-get install ripgrep)").not.toBeNull();
  for (const [engine, rgPath] of [
    ["walker", null],
    ["ripgrep", rg],
  ] as const) {
    const host = await startTestHost({ rgPath });
    for (const [rel, text] of Object.entries(FILES)) {
      mkdirSync(path.dirname(path.join(host.root, rel)), { recursive: true });
      writeFileSync(path.join(host.root, rel), text);
    }
    hosts[engine] = host;
  }
});
afterAll(async () => {
  for (const host of Object.values(hosts)) await host.close();
});

describe.each(["walker", "ripgrep"])("ignore files with the %s", (engine) => {
  const client = () => hosts[engine]!.client;

  it("glob lists only what no ignore file excludes", async () => {
    const r = await client().glob({ pattern: "**/*" });
    expect(r).toMatchObject({ engine, paths: VISIBLE, truncated: false });
  });

  it("grep searches the same files", async () => {
    const r = await client().grep({ pattern: "needle" });
    expect(r.matches.map((m) => m.path)).toEqual(VISIBLE);
  });

  it("a glob does not bring ignored files back", async () => {
    expect((await client().glob({ pattern: "*.log" })).paths).toEqual(["keep.log"]);
    expect((await client().glob({ pattern: "**/*.ts" })).paths).toEqual([
      "src/a.ts",
      "src/nested/c.ts",
    ]);
    const grep = await client().grep({ pattern: "needle", glob: "*.tmp" });
    expect(grep.matches.map((m) => m.path)).toEqual(["src/nested/b.tmp"]);
  });

  it("searching a subdirectory still applies the ignore files above it", async () => {
    expect((await client().glob({ pattern: "**/*", path: "src" })).paths).toEqual([
      "src/a.ts",
      "src/nested/b.tmp",
      "src/nested/c.ts",
    ]);
    const grep = await client().grep({ pattern: "needle", path: "src/nested" });
    expect(grep.matches.map((m) => m.path)).toEqual(["src/nested/b.tmp", "src/nested/c.ts"]);
  });
});
