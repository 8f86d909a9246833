/**
 * Issue 30's "accepted, then failed" load through the whole stack (bench/stack.ts: a real
 * Worker under `wrangler dev` and a real sandbox host): CALLS bash calls of
 * `sleep SECONDS; echo done` created at once in `default`. Prints how many creates were
 * accepted (201) or refused (429 with Retry-After), how every accepted call settled, and
 * the time to the last one beside the ideal (the calls run SANDBOX_MAX_RUNNING_EXECS at
 * a time). With `BENCH_BEFORE=<checkout>` the same load runs against that checkout too.
 * `QUEUE_CALLS` (default 200) and `QUEUE_SECONDS` (default 3) set the load.
 */
import { randomBytes } from "node:crypto";
import { DEFAULT_SANDBOX_CONFIG } from "../sandbox/config.ts";
import { type Stack, startStack } from "./stack.ts";

const CALLS = Number(process.env.QUEUE_CALLS ?? 200);
const SECONDS = Number(process.env.QUEUE_SECONDS ?? 3);

interface Settled {
  isError: boolean;
  content: { text?: string }[];
}

async function load(stack: Stack): Promise<string[]> {
  const headers = { authorization: `Bearer ${stack.apiToken}`, "content-type": "application/json" };
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: CALLS }, async (_, i) => {
      const toolCallId = `queue-${i}-${randomBytes(4).toString("hex")}`;
      const res = await fetch(`${stack.apiUrl}/v1/invocations`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          tool: "bash",
          args: { command: `sleep ${SECONDS}; echo done`, timeout: 600 },
          toolCallId,
        }),
      });
      await res.body?.cancel();
      return { toolCallId, status: res.status, retryAfter: res.headers.get("retry-after") };
    }),
  );
  const count = (status: number) => answers.filter((a) => a.status === status).length;
  const settled = await Promise.all(
    answers
      .filter((a) => a.status === 201)
      .map(async ({ toolCallId }): Promise<Settled> => {
        for (;;) {
          const res = await fetch(`${stack.apiUrl}/v1/invocations/${toolCallId}/result?wait=25`, {
            headers,
          });
          if (res.status === 200) return (await res.json()) as Settled;
          await res.body?.cancel();
        }
      }),
  );
  const seconds = (performance.now() - started) / 1000;
  const done = settled.filter((r) => !r.isError && r.content[0]?.text === "done\n").length;
  const failed = settled.filter((r) => r.isError);
  const ideal = Math.ceil(CALLS / DEFAULT_SANDBOX_CONFIG.maxRunningExecs) * SECONDS;
  const refused = answers.find((a) => a.status === 429);
  return [
    `${count(201)} accepted`,
    `${count(429)} refused 429${refused ? ` (Retry-After ${refused.retryAfter})` : ""}`,
    `${CALLS - count(201) - count(429)} other`,
    `${done} done`,
    `${failed.length} accepted then failed${failed.length ? ` (${JSON.stringify(failed[0]?.content[0]?.text?.slice(-100))})` : ""}`,
    `last settled at ${seconds.toFixed(1)} s (ideal ${ideal} s, ${(seconds / ideal).toFixed(2)}×)`,
  ];
}

export default async function bench(): Promise<void> {
  console.log(`${CALLS} bash calls of 'sleep ${SECONDS}' created at once in default:\n`);
  const checkouts: [string, string | undefined][] = [["this checkout", undefined]];
  if (process.env.BENCH_BEFORE) checkouts.push(["BENCH_BEFORE", process.env.BENCH_BEFORE]);
  for (const [label, root] of checkouts) {
    const stack = await startStack(root);
    try {
      console.log(`| ${label} | ${(await load(stack)).join(" | ")} |`);
    } finally {
      await stack.stop();
    }
  }
}
