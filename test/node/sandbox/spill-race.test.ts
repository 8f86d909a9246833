// The spill attacked as a jailed command would attack it (issue 20): a renameat2
// (RENAME_EXCHANGE) loop, run by perl inside the jail, swaps the workspace's
// `.toolwire/spill` folder with a symlink to a host folder the jail cannot see, while
// other calls create spills, fetch them, and try to append to and rewrite them. The
// three checks share one swap window of SWAP_SECONDS.
import { execSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execId, fold, startTestHost, type TestHost } from "./harness.ts";

const SWAP_SECONDS = 25;
/** seq 1 5000: past the 2,000-line window, so every call spills. */
const SPILLED = "seq 1 5000";
const SPILLED_TEXT = execSync(SPILLED).toString();

let host: TestHost;
let outside: string;

beforeAll(async () => {
  host = await startTestHost();
  outside = mkdtempSync(path.join(tmpdir(), "toolwire-race-outside-"));
  mkdirSync(path.join(outside, "spill"));
});
afterAll(async () => {
  await host?.close();
  rmSync(outside, { recursive: true, force: true });
});

/** A perl loop in the jail: swap `.toolwire/spill` and a symlink to `target`, for `seconds`. */
function swapLoop(target: string, seconds: number): string {
  // 316 is renameat2 on x86-64, -100 AT_FDCWD, 2 RENAME_EXCHANGE.
  const perl = `my ($a, $b) = (".toolwire/spill", ".toolwire/swap"); my $end = time + ${seconds}; my $n = 0; while (time < $end) { for (1..1000) { syscall(316, -100, $a, -100, $b, 2) == 0 and $n++; } } print "swaps $n\\n";`;
  return `mkdir -p .toolwire/spill && ln -sfn ${target} .toolwire/swap && perl -e '${perl}'`;
}

/** Runs `count` async jobs, `width` at a time. */
async function pool<T>(count: number, width: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await job(i);
      }
    }),
  );
  return out;
}

async function fetchSpill(id: string): Promise<string> {
  const res = await fetch(`${host.url}/v1/exec/${id}/spill`, {
    headers: { Authorization: `Bearer ${host.token}` },
  });
  return `${res.status} ${await res.text()}`;
}

describe("the spill under a renameat2 swap loop run in the jail", () => {
  it("creates no file outside, serves no foreign byte, and keeps every result and /spill byte-exact", async () => {
    // Spills that exist before the race, with a foreign file of the same name outside.
    const fetched = await pool(10, 5, async () => {
      const id = execId("fetch");
      const f = await fold(host.client.exec({ execId: id, command: SPILLED }));
      expect(f.metadata).toMatchObject({ truncated: true, totalLines: 5000 });
      writeFileSync(path.join(outside, "spill", `${id}.log`), "FOREIGN host file\n");
      return id;
    });
    const swapper = fold(
      host.client.exec({
        execId: execId("swap"),
        command: swapLoop(path.join(outside, "spill"), SWAP_SECONDS),
        timeoutSec: SWAP_SECONDS + 30,
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));

    // 1. 120 calls creating spills while the folder is swapped.
    const creating = pool(120, 4, async () => {
      const f = await fold(host.client.exec({ execId: execId("make"), command: SPILLED }));
      const ok = f.exit?.exitCode === 0 && f.text === SPILLED_TEXT.slice(-f.text.length);
      if (!ok) console.log(`failed call: ${JSON.stringify(f.exit)} ${f.text.slice(0, 200)}`);
      return ok;
    });
    // 2. 300 spill fetches.
    const fetching = pool(300, 4, async (i) => fetchSpill(fetched[i % fetched.length]!));
    // 3. A running call that a second command appends to, then rewrites once it settled.
    const victim = execId("victim");
    const victimRun = fold(
      host.client.exec({ execId: victim, command: `seq 1 40; sleep 3; seq 41 5000` }),
    );
    const paths = `.toolwire/spill/${victim}.log /toolwire/spill/${victim}.log`;
    const appender = fold(
      host.client.exec({
        execId: execId("append"),
        command: `for i in $(seq 1 200); do for p in ${paths}; do echo INJECTED-$i >> $p; done 2>/dev/null; sleep 0.02; done; echo done`,
      }),
    );

    const created = await creating;
    const answers = await fetching;
    const victimResult = await victimRun;
    await appender;
    const rewrite = await fold(
      host.client.exec({
        execId: execId("rewrite"),
        command: `for p in ${paths}; do printf FORGED > $p; done 2>/dev/null; echo done`,
      }),
    );
    const swaps = await swapper;

    const expected = `200 ${SPILLED_TEXT}`;
    const report = {
      swaps: /swaps (\d+)/.exec(swaps.text)?.[1],
      createdOk: created.filter(Boolean).length,
      filesOutside: readdirSync(path.join(outside, "spill")).length - fetched.length,
      foreignFetches: answers.filter((a) => a.includes("FOREIGN")).length,
      wrongFetches: answers.filter((a) => a !== expected).length,
    };
    console.log(`spill race: ${JSON.stringify(report)}`);
    expect(rewrite.text).toBe("done\n");
    expect(Number(report.swaps)).toBeGreaterThan(100_000);
    expect(report).toMatchObject({
      createdOk: 120,
      filesOutside: 0,
      foreignFetches: 0,
      wrongFetches: 0,
    });

    // The victim's stored result and its spill are the command's output, byte for byte.
    const victimText = execSync("seq 1 40; seq 41 5000").toString();
    expect(victimResult.exit).toEqual({ kind: "exit", exitCode: 0 });
    expect(victimResult.metadata).toMatchObject({
      totalLines: 5000,
      totalBytes: victimText.length,
    });
    expect(victimResult.text).toBe(victimText.slice(-victimResult.text.length));
    expect(await fetchSpill(victim)).toBe(`200 ${victimText}`);
    const read = await host.client.read({ path: victimResult.metadata!.spillPath!, offset: 4999 });
    expect(read.lines).toEqual(["4999", "5000"]);
  }, 120_000);

  it("a symlink or folder planted at the spill path or at a future spill name changes nothing", async () => {
    const future = execId("future");
    const plant = await fold(
      host.client.exec({
        execId: execId("plant"),
        command: `rm -rf .toolwire; mkdir -p .toolwire/spill/${future}.log; ln -s ${outside} .toolwire/spill/next.log; mv .toolwire .toolwire-real; ln -s ${outside} .toolwire; mkdir -p /toolwire/spill/${future}.log 2>&1 | grep -c Read-only`,
      }),
    );
    expect(plant.text).toBe("1\n");
    for (const id of [future, execId()]) {
      const f = await fold(host.client.exec({ execId: id, command: SPILLED }));
      expect(f.exit).toEqual({ kind: "exit", exitCode: 0 });
      expect(await fetchSpill(id)).toBe(`200 ${SPILLED_TEXT}`);
      expect(JSON.stringify(f)).not.toContain(host.root);
    }
    expect(readdirSync(outside).sort()).toEqual(["spill"]);
  });
});
