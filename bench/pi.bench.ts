/**
 * Issue 17's benchmark: `seq 1 100000` through pi (its SDK session, a faux model) with
 * the toolwire/pi extension, against pi's built-in local `bash`, in the same run,
 * interleaved. Per run: time from the tool call's start to its result, the updates pi
 * receives and their rate, the bytes per update on the wire (WebSocket frames the
 * extension's subscription receives), and the size of the text the model receives.
 * Toolwire and a sandbox host are started as the e2e tests start them.
 *
 * BENCH_PI_RUNS sets the runs (default 3). Not part of `npm test`: `npm run bench -- pi`.
 */
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { startPiSession } from "../test/support/e2e/pi/session.ts";
import { runGlobalSetup } from "./global-setup.ts";
import { load, median } from "./run-stats.ts";

const RUNS = Number(process.env.BENCH_PI_RUNS ?? 3);
const COMMAND = "seq 1 100000";

interface Sample {
  seconds: number;
  updates: number;
  wireBytes: number;
  resultChars: number;
}

let wireBytes = 0;
const PlatformWebSocket = globalThis.WebSocket;
/** Counts what every WebSocket of this process receives. */
class CountingWebSocket extends PlatformWebSocket {
  constructor(url: string | URL, protocols?: string | string[]) {
    super(url, protocols);
    this.addEventListener("message", (event: MessageEvent) => {
      const data = event.data as string | ArrayBuffer | Blob;
      wireBytes +=
        typeof data === "string"
          ? Buffer.byteLength(data)
          : data instanceof ArrayBuffer
            ? data.byteLength
            : data.size;
    });
  }
}
globalThis.WebSocket = CountingWebSocket as typeof WebSocket;

let callCounter = 0;
async function once(toolwire: { url: string; token: string }, local: boolean): Promise<Sample> {
  const id = `bench-pi-${Date.now().toString(36)}-${callCounter++}`;
  const pi = await startPiSession(
    toolwire,
    [
      fauxAssistantMessage(fauxToolCall("bash", { command: COMMAND }, { id }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxText("done")),
    ],
    { local },
  );
  let started = 0;
  let ended = 0;
  let updates = 0;
  let resultChars = 0;
  wireBytes = 0;
  pi.session.subscribe((event) => {
    if (event.type === "tool_execution_start") started = performance.now();
    if (event.type === "tool_execution_update") updates++;
    if (event.type === "tool_execution_end") {
      ended = performance.now();
      const content = (event.result?.content ?? []) as { text?: string }[];
      resultChars = content.reduce((n, c) => n + (c.text?.length ?? 0), 0);
    }
  });
  await pi.session.prompt("count");
  pi.dispose();
  return { seconds: (ended - started) / 1000, updates, wireBytes, resultChars };
}

function row(name: string, samples: Sample[]): string {
  const seconds = median(samples.map((s) => s.seconds));
  const updates = median(samples.map((s) => s.updates));
  const perUpdate = median(samples.map((s) => (s.updates ? s.wireBytes / s.updates : 0)));
  const chars = median(samples.map((s) => s.resultChars));
  return `| ${name} | ${seconds.toFixed(2)} s | ${updates} | ${(updates / seconds).toFixed(1)} | ${perUpdate ? Math.round(perUpdate).toLocaleString("en-US") : "—"} | ${chars.toLocaleString("en-US")} |`;
}

export default async function bench(): Promise<void> {
  const { provided, stop: teardown } = await runGlobalSetup("test/e2e/global-setup.ts");
  try {
    const toolwire = { url: provided.apiUrl!, token: provided.apiToken! };
    await once(toolwire, false); // warm-up: wrangler's first request, pi's module load
    const remote: Sample[] = [];
    const local: Sample[] = [];
    for (let i = 0; i < RUNS; i++) {
      remote.push(await once(toolwire, false));
      local.push(await once(toolwire, true));
    }
    console.log(`load average ${load()}; ${RUNS} runs each, medians`);
    console.log(
      "| bash `seq 1 100000` | time to result | updates | updates/s | bytes/update on the wire | text to the model (chars) |",
    );
    console.log("|---|---|---|---|---|---|");
    console.log(row("pi + toolwire/pi", remote));
    console.log(row("pi built-in local bash", local));
    const ratio = median(remote.map((s) => s.seconds)) / median(local.map((s) => s.seconds));
    console.log(`time ratio toolwire/local: ${ratio.toFixed(2)}x`);
  } finally {
    await teardown();
  }
}
