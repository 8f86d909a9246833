/**
 * A CPU profile of the Worker's isolate under `wrangler dev`, through its inspector
 * (`--inspector-port`): the subscribers bench takes one per swarm with BENCH_PROFILE=1
 * to tell Toolwire's JavaScript from workerd's own work (decision 236). V8 names the
 * time it cannot give to a script `(program)` (the runtime's native code on the
 * isolate's thread: sockets, the event loop) and the time the thread waits `(idle)`.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Milliseconds of self time, by function (`name url:line`), largest first. */
export type SelfTimes = [string, number][];

/** Sends one inspector command and waits for its answer. */
function command(ws: WebSocket, id: number, method: string, params: object = {}) {
  return new Promise<unknown>((resolve, reject) => {
    const onMessage = (event: MessageEvent) => {
      const message = JSON.parse(String(event.data)) as {
        id?: number;
        result?: unknown;
        error?: unknown;
      };
      if (message.id !== id) return;
      ws.removeEventListener("message", onMessage);
      if (message.error) reject(new Error(`${method}: ${JSON.stringify(message.error)}`));
      else resolve(message.result);
    };
    ws.addEventListener("message", onMessage);
    ws.send(JSON.stringify({ id, method, params }));
  });
}

/**
 * Starts profiling the isolate behind the inspector at `inspectorUrl` (e.g.
 * `http://127.0.0.1:9229`); the answer stops it and gives each function's self time.
 * @example const stop = await startProfile(url); …; const times = await stop();
 */
export async function startProfile(inspectorUrl: string): Promise<() => Promise<SelfTimes>> {
  const ws = new WebSocket(`${inspectorUrl.replace(/^http/, "ws")}/ws`);
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new Error("the inspector refused")), { once: true });
  });
  await command(ws, 1, "Profiler.enable");
  await command(ws, 2, "Profiler.setSamplingInterval", { interval: 200 });
  await command(ws, 3, "Profiler.start");
  return async () => {
    const { profile } = (await command(ws, 4, "Profiler.stop")) as { profile: CpuProfile };
    ws.close();
    return selfTimes(profile);
  };
}

function selfTimes(profile: CpuProfile): SelfTimes {
  const nameOf = new Map<number, string>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url ? ` ${url.slice(url.lastIndexOf("/") + 1)}:${lineNumber + 1}` : "";
    nameOf.set(node.id, `${functionName || "(anonymous)"}${where}`);
  }
  const times = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const name = nameOf.get(id) ?? "?";
    times.set(name, (times.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return [...times.entries()].sort((a, b) => b[1] - a[1]);
}
