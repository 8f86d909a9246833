/**
 * A sandbox's egress proxy against no proxy (issue 25, decision 181): the same jailed
 * command, once in a created sandbox (through its bridge and proxy) and once in the
 * host's default workspace with `SANDBOX_NETWORK=on` (the host's own network, direct).
 * A 400 MB download and a 400 MB upload (curl's `PUT` of a file), each at curl's own
 * rate, and `npm install` of one package from a registry on loopback (wall time of the
 * call, fresh npm cache each time). The download and the upload are also taken through
 * the relays of `native-relay.c`, from the direct workspace, when the machine has a C
 * compiler: what any relay costs here (decision 188).
 * `node bench/run.ts egress` (as root: the sandbox's network namespace is a bind mount).
 */

import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_SANDBOX_CONFIG, startSandboxHost } from "../sandbox/index.ts";
import { DEFAULT_SANDBOX_LIMITS } from "../sandbox/sandboxes/config.ts";
import { SandboxClient } from "../src/execenv/index.ts";
import { fold } from "../test/node/sandbox/harness.ts";
import { startTinyRegistry } from "../test/support/loopback-upstreams.ts";
import { load, median } from "./run-stats.ts";

const TRANSFER_BYTES = 400 * 1024 * 1024;
const ROUNDS = 5;
const NATIVE_MODES = ["rw", "threads", "splice"] as const;

async function run(client: SandboxClient, command: string): Promise<string> {
  const execId = `x${randomBytes(8).toString("hex")}`;
  return (await fold(client.exec({ execId, command }))).text;
}

/** The first line a child prints (the port it listens on). */
function firstLine(child: ReturnType<typeof spawn>): Promise<string> {
  return new Promise((resolve) => child.stdout?.once("data", (c) => resolve(String(c).trim())));
}

/**
 * Each native relay, built from `native-relay.c` and listening, by mode; none when the
 * machine has no C compiler.
 */
async function startNativeRelays(
  scratch: string,
  upstreamPort: number,
): Promise<{ mode: string; port: number; child: ReturnType<typeof spawn> }[]> {
  const binary = path.join(scratch, "native-relay");
  try {
    const source = path.join(import.meta.dirname, "native-relay.c");
    execFileSync("cc", ["-O2", "-pthread", "-o", binary, source], { stdio: "ignore" });
  } catch {
    console.log("(no C compiler here: the native relays are not measured)");
    return [];
  }
  return Promise.all(
    NATIVE_MODES.map(async (mode) => {
      const child = spawn(binary, [mode, String(upstreamPort)], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      return { mode, port: Number(await firstLine(child)), child };
    }),
  );
}

export default async function egressBench(): Promise<void> {
  const scratch = mkdtempSync(path.join(tmpdir(), "tw-bench-egress-"));
  // The upstream in a process of its own, so it does not share the proxy's event loop.
  const big = spawn(
    process.execPath,
    [
      "-e",
      `const chunk = Buffer.alloc(1 << 20);
require("node:http").createServer((req, res) => {
  if (req.method === "PUT") {
    let got = 0;
    req.on("data", (c) => { got += c.length; });
    return void req.on("end", () => res.end(String(got)));
  }
  res.setHeader("content-length", String(${TRANSFER_BYTES}));
  let sent = 0;
  const pump = () => {
    while (sent < ${TRANSFER_BYTES}) { sent += chunk.length; if (!res.write(chunk)) return void res.once("drain", pump); }
    res.end();
  };
  pump();
}).listen(0, "127.0.0.1", function () { console.log(this.address().port); });`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const bigPort = Number(await firstLine(big));
  const relays = await startNativeRelays(scratch, bigPort);
  const registry = await startTinyRegistry(scratch, "tiny-answer");
  const token = randomBytes(16).toString("hex");
  const host = await startSandboxHost({
    ...DEFAULT_SANDBOX_CONFIG,
    token,
    port: 0,
    root: path.join(scratch, "ws"),
    rgPath: null,
    network: true,
    egress: {
      available: true,
      allowPrivate: true,
      reservedPorts: [],
      maxConnections: 64,
      lookup: async () => ["127.0.0.1"],
    },
    sandboxes: {
      dir: path.join(scratch, "sbx"),
      disk: "none",
      maxSandboxes: 4,
      // Every round moves about 800 MB through the proxy, past the default budget.
      limits: { ...DEFAULT_SANDBOX_LIMITS, egressBytes: 16 * 1024 ** 3 },
    },
  });
  try {
    const id = `sbx_default_${randomBytes(10).toString("hex")}`;
    const made = await fetch(`${host.url}/v1/sandboxes`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        id,
        network: { allow: [`up.test:${bigPort}`, `reg.test:${registry.port}`] },
      }),
    });
    if (made.status !== 201) throw new Error(await made.text());
    const proxied = new SandboxClient(`${host.url}/sandboxes/${id}`, token);
    const direct = new SandboxClient(host.url, token);

    // curl's rate either way; an upload sends a 400 MB file from the command's own
    // workspace, made before its first round and not timed.
    const ways = [
      { what: "download", path: "/", rate: "speed_download", send: "", before: "" },
      {
        what: "upload (PUT)",
        path: "/up",
        rate: "speed_upload",
        send: "-T up.bin ",
        before: `test -s up.bin || head -c ${TRANSFER_BYTES} /dev/zero > up.bin; `,
      },
    ].map((way) => ({
      ...way,
      direct: [] as number[],
      proxy: [] as number[],
      relay: new Map(relays.map((r) => [r.mode, [] as number[]])),
    }));
    const speed = async (
      client: SandboxClient,
      way: (typeof ways)[number],
      at: string,
    ): Promise<number> => {
      const out = await run(
        client,
        `${way.before}curl -sS -o /dev/null -w "%{${way.rate}}" ${way.send}http://${at}${way.path}`,
      );
      if (!/^[0-9.]+$/.test(out)) throw new Error(`curl failed: ${out}`);
      return Number(out) / 1024 / 1024;
    };
    for (let i = 0; i < ROUNDS; i++) {
      for (const way of ways) {
        way.direct.push(await speed(direct, way, `127.0.0.1:${bigPort}`));
        way.proxy.push(await speed(proxied, way, `up.test:${bigPort}`));
        for (const r of relays) {
          way.relay.get(r.mode)?.push(await speed(direct, way, `127.0.0.1:${r.port}`));
        }
      }
    }

    const install = async (client: SandboxClient, registryHost: string) => {
      const t0 = performance.now();
      const out = await run(
        client,
        `rm -rf n && mkdir n && cd n && npm install --cache ./cache --no-audit --no-fund --registry http://${registryHost}:${registry.port}/ tiny-answer 2>&1 | tail -5 && ls node_modules/tiny-answer >/dev/null && echo done`,
      );
      if (!out.includes("done")) throw new Error(`npm install failed: ${out}`);
      return performance.now() - t0;
    };
    const npmProxy: number[] = [];
    const npmDirect: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      npmDirect.push(await install(direct, "127.0.0.1"));
      npmProxy.push(await install(proxied, "reg.test"));
    }

    console.log(`load average ${load()}`);
    console.log(
      `| what (median of ${ROUNDS}) | direct (SANDBOX_NETWORK=on) | through the sandbox's proxy | ratio |`,
    );
    console.log("| --- | --- | --- | --- |");
    for (const way of ways) {
      const d = median(way.direct);
      const p = median(way.proxy);
      console.log(
        `| 400 MB ${way.what}, curl's rate | ${d.toFixed(0)} MiB/s | ${p.toFixed(0)} MiB/s | ${(p / d).toFixed(2)}× |`,
      );
      for (const [mode, rates] of way.relay) {
        const r = median(rates);
        console.log(
          `| 400 MB ${way.what} through native-relay.c ${mode} (on the host, no policy) | ${d.toFixed(0)} MiB/s | ${r.toFixed(0)} MiB/s | ${(r / d).toFixed(2)}× (the proxy: ${(p / r).toFixed(2)}× this) |`,
        );
      }
    }
    const nd = median(npmDirect);
    const np = median(npmProxy);
    console.log(
      `| npm install of one package | ${nd.toFixed(0)} ms | ${np.toFixed(0)} ms | ${(np / nd).toFixed(2)}× the time |`,
    );
  } finally {
    await host.close();
    for (const r of relays) r.child.kill();
    big.kill();
    registry.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
