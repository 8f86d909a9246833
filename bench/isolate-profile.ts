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
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Milliseconds of self time by function and its caller (`name url:line ← caller`), and of
 * total time (itself and what it called) by function, largest first.
 */
export interface SelfTimes {
  self: [string, number][];
  total: [string, number][];
}

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
  // wrangler's inspector proxy takes only devtools' or a loopback Origin; Node's
  // WebSocket (undici) takes headers beside the standard arguments.
  const init = { headers: { origin: "http://127.0.0.1" } } as unknown as string[];
  const ws = new WebSocket(`${inspectorUrl.replace(/^http/, "ws")}/ws`, init);
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
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url ? ` ${url.slice(url.lastIndexOf("/") + 1)}:${lineNumber + 1}` : "";
    nameOf.set(node.id, `${functionName || "(anonymous)"}${where}`);
    for (const child of node.children ?? []) parentOf.set(child, node.id);
  }
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const add = (times: Map<string, number>, key: string, ms: number) =>
    times.set(key, (times.get(key) ?? 0) + ms);
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const parent = parentOf.get(id);
    const caller = parent === undefined ? "" : ` ← ${nameOf.get(parent)}`;
    add(self, `${nameOf.get(id)}${caller}`, ms);
    const seen = new Set<string>();
    for (let node: number | undefined = id; node !== undefined; node = parentOf.get(node)) {
      const name = nameOf.get(node)!;
      if (!seen.has(name)) add(total, name, ms);
      seen.add(name);
    }
  });
  const sorted = (times: Map<string, number>) => [...times.entries()].sort((a, b) => b[1] - a[1]);
  return { self: sorted(self), total: sorted(total) };
}
