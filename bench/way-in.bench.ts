/**
 * The way in of preview URLs on a root host (decision 187): a connection to an app's port
 * inside a sandbox's network namespace, made by the spawner, against the bridge process
 * (decision 182) it replaces there, started for the connection (its first after an idle
 * stop) and already running. The app is `python3 -m http.server` in a namespace of its
 * own; each connection is opened and closed. `node bench/run.ts way-in` (as root: the
 * namespace is a bind mount).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sharedSpawner } from "../sandbox/exec/spawner.ts";
import { IngressBridge } from "../sandbox/network/ingress-bridge.ts";
import { NetworkNamespace } from "../sandbox/network/netns.ts";
import { SpawnerWayIn, type WayIn } from "../sandbox/network/way-in.ts";
import { median } from "./run-stats.ts";

const ROUNDS = 20;
const PORT = 8000;

async function timed(wayIn: WayIn): Promise<number> {
  const t0 = performance.now();
  (await wayIn.connect(PORT)).destroy();
  return performance.now() - t0;
}

export default async function wayInBench(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "tw-bench-way-in-"));
  const ns = await NetworkNamespace.create(path.join(dir, "ns"));
  const [file, ...args] = [
    ...ns.enter(),
    ...["python3", "-m", "http.server", String(PORT), "--bind", "127.0.0.1"],
    ...["--directory", dir],
  ];
  const app = spawn(file as string, args, { stdio: "ignore" });
  try {
    // Until the app listens: a connection through a bridge that is then stopped.
    for (let ready = false; !ready; ) {
      const probe = new IngressBridge(() => ns.enter(), path.join(dir, "probe.sock"));
      ready = await probe.connect(PORT).then(
        (socket) => {
          socket.destroy();
          return true;
        },
        () => false,
      );
      probe.stop();
      if (!ready) await new Promise((r) => setTimeout(r, 100));
    }
    const started: number[] = [];
    const running: number[] = [];
    const bySpawner: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const bridge = new IngressBridge(() => ns.enter(), path.join(dir, `in${i}.sock`));
      started.push(await timed(bridge));
      running.push(await timed(bridge));
      bridge.stop();
      bySpawner.push(await timed(new SpawnerWayIn(ns.file, sharedSpawner, bridge)));
    }
    const s = median(bySpawner);
    console.log(`| a connection into the namespace (median of ${ROUNDS}) | ms | × the spawner |`);
    console.log("| --- | ---: | ---: |");
    console.log(`| by the spawner (decision 187) | ${s.toFixed(2)} | 1.00 |`);
    for (const [what, xs] of [
      ["by a bridge already running", running],
      ["by a bridge started for it (after an idle stop)", started],
    ] as const) {
      console.log(`| ${what} | ${median(xs).toFixed(2)} | ${(median(xs) / s).toFixed(1)} |`);
    }
  } finally {
    app.kill("SIGKILL");
    await ns.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}
