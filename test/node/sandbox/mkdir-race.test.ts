// Folders made by `write` and by the tar upload, attacked as a jailed command would
// (issue 30): a renameat2 (RENAME_EXCHANGE) loop in the jail swaps the folder `d` with a
// symlink to a host folder, while the host makes folders under `d`. Each folder must be
// made in the folder the host opened and checked, never through the name `d` again
// (decision 241). The race runs RACE_SECONDS in `default` and in a created sandbox at
// once; the issue's own run was 30 s, this one fits the test budget.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxClient } from "../../../src/execenv/index.ts";
import { execId, fold } from "./harness.ts";
import { type SandboxTestHost, startSandboxTestHost } from "./sandboxes/sandbox-host.ts";

const RACE_SECONDS = 8;

let host: SandboxTestHost;
let outside: string;

beforeAll(async () => {
  host = await startSandboxTestHost();
  outside = mkdtempSync(path.join(tmpdir(), "toolwire-mkdir-outside-"));
});
afterAll(async () => {
  await host?.close();
  rmSync(outside, { recursive: true, force: true });
});

/** A perl loop in the jail: swap `d` and a symlink to `target`, for `seconds`. */
function swapLoop(target: string, seconds: number): string {
  // 316 is renameat2 on x86-64, -100 AT_FDCWD, 2 RENAME_EXCHANGE.
  const perl = `my ($a, $b) = ("d", "swap"); my $end = time + ${seconds}; my $n = 0; while (time < $end) { for (1..1000) { syscall(316, -100, $a, -100, $b, 2) == 0 and $n++; } } print "swaps $n\\n";`;
  return `mkdir -p d && ln -sfn ${target} swap && perl -e '${perl}'`;
}

/** A one-file tar archive (ustar), made by hand so the test needs no tar library. */
function tarOf(name: string, body: string): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, "utf8");
  header.write("0000644\0", 100);
  header.write("0000000\0", 108);
  header.write("0000000\0", 116);
  header.write(`${body.length.toString(8).padStart(11, "0")}\0`, 124);
  header.write("00000000000\0", 136);
  header.write("        ", 148);
  header.write("0", 156);
  header.write("ustar\u000000", 257, "latin1");
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "latin1");
  const data = Buffer.alloc(Math.ceil(body.length / 512) * 512);
  data.write(body);
  return Buffer.concat([header, data, Buffer.alloc(1024)]);
}

/** Makes folders under `d` in a loop until `until`; returns how many operations ran. */
async function hammer(until: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let n = 0;
  await Promise.all(
    Array.from({ length: 3 }, async (_, lane) => {
      for (let i = lane; Date.now() < until; i += 3) {
        await op(i).catch(() => {});
        n++;
      }
    }),
  );
  return n;
}

function race(client: SandboxClient, target: string) {
  return fold(
    client.exec({
      execId: execId("swap"),
      command: swapLoop(target, RACE_SECONDS),
      timeoutSec: RACE_SECONDS + 30,
    }),
  );
}

describe("folders made while a command swaps their parent for a symlink", () => {
  it("are never made outside the workspace, by write or by the upload", {
    timeout: (RACE_SECONDS + 30) * 1000,
  }, async () => {
    const sandbox = await host.create();
    const mine = path.join(outside, "default");
    const theirs = path.join(outside, "sandbox");
    mkdirSync(mine);
    mkdirSync(theirs);
    const swaps = [race(host.client, mine), race(sandbox.client, theirs)];
    await new Promise((resolve) => setTimeout(resolve, 300));
    const until = Date.now() + (RACE_SECONDS - 1) * 1000;
    const [writes, sandboxWrites, uploads] = await Promise.all([
      hammer(until, (i) => host.client.write({ path: `d/w${i}/x/f.txt`, content: "x" })),
      hammer(until, (i) => sandbox.client.write({ path: `d/w${i}/x/f.txt`, content: "x" })),
      hammer(until, (i) =>
        host.request(
          "PUT",
          `/sandboxes/${sandbox.id}/v1/files?path=d/u${i}/x`,
          new Uint8Array(tarOf("f.txt", "x")),
          "application/x-tar",
        ),
      ),
    ]);
    const swapped = await Promise.all(swaps);
    for (const s of swapped) expect(s.text).toMatch(/swaps [1-9]/);
    const escaped = [...readdirSync(outside)].flatMap((side) =>
      readdirSync(path.join(outside, side)).map((name) => `${side}/${name}`),
    );
    console.log(
      `mkdir race ${RACE_SECONDS} s: ${writes} writes in default, ${sandboxWrites} writes and ${uploads} uploads in a sandbox; ${swapped.map((s) => s.text.trim()).join(", ")}; ${escaped.length} made outside`,
    );
    expect(writes + sandboxWrites + uploads).toBeGreaterThan(100);
    expect(escaped).toEqual([]);
  });
});
