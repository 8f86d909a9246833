/**
 * Where a host create's time goes (issue 29, decision 224): each step a root host takes
 * to make a sandbox, timed alone with the host's own modules, made on demand against
 * taken from what was made ahead (decision 225), in one run, interleaved round by round.
 * On demand: format the image (truncate + mkfs.ext4), mount it, remove lost+found, make
 * the network (a namespace, then a short-lived Node child that makes the proxy's socket
 * in it, decision 254), the pids cgroup, the app
 * with its jail (with the bubblewrap probe a created sandbox ran before decision 227,
 * and without). Made ahead: take the mounted disk (a rename of its folder since decision
 * 257, against the `mount --move` before it), attach the ready network. Then the
 * first command (`echo`, jailed, to its exit) and the unmount. Median and max of
 * `BENCH_STEPS_ROUNDS` (10). `node bench/run.ts create-steps` (as root).
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { createSandboxApp } from "../sandbox/app.ts";
import { configFromEnv } from "../sandbox/config.ts";
import { Cgroups } from "../sandbox/jail/cgroups.ts";
import { prepareNetwork } from "../sandbox/network/ready-network.ts";
import { proxyEnv, SandboxNetwork } from "../sandbox/network/sandbox-network.ts";
import { diskPaths, formatImage, prepareDisk } from "../sandbox/sandboxes/disk.ts";
import { load } from "./run-stats.ts";

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_STEPS_ROUNDS ?? 10);
const GiB = 1024 * 1024 * 1024;

export default async function createSteps(): Promise<void> {
  if (process.getuid?.() !== 0) {
    console.log("needs root (loop mounts, network namespaces); skipped");
    return;
  }
  const dir = mkdtempSync(path.join(tmpdir(), "tw-steps-"));
  const config = configFromEnv({
    SANDBOX_TOKEN: "x".repeat(32),
    SANDBOX_ROOT: path.join(dir, "ws"),
  });
  const parent = Cgroups.find("pids");
  const rows = new Map<string, number[]>();
  const time = async <T>(name: string, step: () => Promise<T> | T): Promise<T> => {
    const t0 = performance.now();
    const out = await step();
    rows.set(name, [...(rows.get(name) ?? []), performance.now() - t0]);
    return out;
  };
  console.log(`${ROUNDS} rounds, a 1 GiB disk each; load before: ${load()}\n`);
  try {
    for (let i = 0; i < ROUNDS; i++) {
      for (const way of ["on demand", "made ahead"] as const) {
        const folder = path.join(dir, `sbx_${way === "on demand" ? "d" : "a"}${i}`);
        const { mountPoint: mp, image: img } = diskPaths(folder);
        // What the pool made earlier, outside the timing.
        const ready =
          way === "made ahead"
            ? {
                disk: await prepareDisk(path.join(dir, `ready-${i}`), GiB),
                net: await prepareNetwork(path.join(dir, `ready-${i}-net`)),
              }
            : null;
        let network: SandboxNetwork;
        if (ready) {
          // What a create did before decision 257, on a second ready disk: its mount moved.
          const other = await prepareDisk(path.join(dir, `ready-${i}-moved`), GiB);
          const movedTo = path.join(dir, `moved-${i}`);
          await mkdir(movedTo);
          await time("made ahead, before 257: mount --move the ready disk in", () =>
            run("mount", ["--move", diskPaths(other.folder).mountPoint, movedTo]),
          );
          await run("umount", ["-l", movedTo]);
          await rm(movedTo, { recursive: true, force: true });
          await rm(other.folder, { recursive: true, force: true });
          await time("made ahead: rename the ready disk's folder in (257)", () =>
            rename(ready.disk.folder, folder),
          );
          await time("made ahead: attach the ready network (egress proxy)", async () => {
            network = await SandboxNetwork.attach(ready.net, `sbx_${i}`, { allow: [] }, GiB, {
              ...config.egress,
              available: true,
            });
          });
        } else {
          await mkdir(mp, { recursive: true });
          await time("on demand: truncate + mkfs.ext4", () => formatImage(img, GiB));
          await time("on demand: mount -o loop", () =>
            run("mount", ["-o", "loop,nosuid,nodev", img, mp]),
          );
          await time("on demand: remove lost+found", () =>
            rm(`${mp}/lost+found`, { recursive: true }),
          );
          const net = await time(
            "on demand: namespace + the proxy's socket (a Node child that exits)",
            () => prepareNetwork(path.join(folder, "net")),
          );
          network = await SandboxNetwork.attach(net, `sbx_${i}`, { allow: [] }, GiB, {
            ...config.egress,
            available: true,
          });
        }
        await mkdir(path.join(mp, "workspace"));
        await mkdir(path.join(mp, "spill"));
        const cgroup = await time(`${way}: pids cgroup`, () =>
          parent!.child(`sbx_${way[0]}${i}`, 300),
        );
        const appConfig = {
          ...config,
          root: path.join(mp, "workspace"),
          spillDir: path.join(mp, "spill"),
        };
        const ns = { enter: network!.namespace.enter(), env: proxyEnv() };
        if (way === "on demand") {
          // Not disposed: its jail shares the sandbox's cgroup (a host that stops clears them).
          await time("on demand: app + jail, with the probe (before 227)", () =>
            createSandboxApp(appConfig, () => cgroup, ns, true),
          );
        }
        const parts = await time(`${way}: app + jail, no probe (227)`, () =>
          createSandboxApp(appConfig, () => cgroup, ns, false),
        );
        await time(`${way}: first command (echo, jailed) to its exit`, async () => {
          const plan = parts.jail.wrap({
            argv: ["/bin/bash", "-c", "echo first"],
            cwd: appConfig.root,
            writable: true,
          });
          await new Promise((resolve) =>
            spawn(plan.file, plan.args, {
              env: plan.env,
              stdio: ["ignore", "pipe", "pipe", "pipe"],
            }).on("exit", resolve),
          );
          plan.release();
        });
        await network!.close();
        parts.jail.dispose();
        await run("umount", ["-l", mp]);
        cgroup.dispose();
        await rm(folder, { recursive: true, force: true });
      }
    }
  } finally {
    parent?.dispose();
    // Anything a failed round left mounted goes first.
    const { stdout } = await run("findmnt", ["-rn", "-o", "TARGET"]);
    for (const target of stdout.split("\n").reverse()) {
      if (target.startsWith(`${dir}/`)) await run("umount", ["-l", target]).catch(() => {});
    }
    rmSync(dir, { recursive: true, force: true });
  }
  console.log("| step | median | max |");
  console.log("|---|---:|---:|");
  for (const [name, times] of [...rows].sort(([a], [b]) => a.localeCompare(b))) {
    const sorted = [...times].sort((a, b) => a - b);
    const med = sorted[sorted.length >> 1] ?? 0;
    console.log(`| ${name} | ${med.toFixed(1)} ms | ${(sorted.at(-1) ?? 0).toFixed(1)} ms |`);
  }
  console.log(`\nload after: ${load()}`);
}
