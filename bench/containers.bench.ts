/**
 * The container backend (issue 18) against the host backend, through the API of a real
 * `wrangler dev`: time to create a sandbox and get its first command's result (host
 * backend; container backend cold, i.e. a new container), the same for a command in a
 * sandbox that already runs (warm), and `yes | head -c 400000000` through the API in a
 * container against the same command writing into a file inside that container.
 * `PATH=$PWD/node_modules/.bin:$PATH node bench/run.ts containers` (needs Docker; the
 * stacks start as test/e2e and test/containers start them). Noisy on a shared machine.
 */
import { runGlobalSetup } from "./global-setup.ts";

const ROUNDS = Number(process.env.BENCH_CONTAINER_ROUNDS ?? 5);
const BIG = "yes | head -c 400000000";

interface Api {
  url: string;
  token: string;
  stop: () => Promise<void>;
}

/** Runs a global setup of the test suites outside vitest and answers what it provided. */
async function startWith(
  setupFile: string,
  urlKey: string,
  tokenKey: string,
): Promise<Api | string> {
  const { provided, stop } = await runGlobalSetup(setupFile);
  if (provided.containersMissing) return provided.containersMissing;
  return { url: provided[urlKey]!, token: provided[tokenKey]!, stop };
}

let calls = 0;

async function post(api: Api, route: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${api.url}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${api.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${route}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** Total bytes of each bash result, by command (the API run must really carry all 400 MB). */
const totalBytes = new Map<string, number>();

/** Runs bash in `sandbox` and waits for its result; answers the milliseconds it took. */
async function bash(api: Api, sandbox: string, command: string): Promise<number> {
  const started = performance.now();
  const toolCallId = `bench_ct_${process.pid}_${++calls}`;
  await post(api, "/v1/invocations", {
    tool: "bash",
    args: { command, timeout: 600 },
    sandbox,
    toolCallId,
  });
  for (;;) {
    const res = await fetch(`${api.url}/v1/invocations/${toolCallId}/result?wait=30`, {
      headers: { authorization: `Bearer ${api.token}` },
    });
    if (res.status === 200) {
      const result = (await res.json()) as {
        isError: boolean;
        content: { text?: string }[];
        truncation?: { totalBytes: number };
      };
      if (result.isError) {
        throw new Error(`bash ${command}: ${result.content[0]?.text?.slice(-300)}`);
      }
      totalBytes.set(command, result.truncation?.totalBytes ?? 0);
      return performance.now() - started;
    }
    await res.body?.cancel();
  }
}

async function createAndFirst(
  api: Api,
  backend: "host" | "container",
): Promise<[number, number, string]> {
  const started = performance.now();
  const view = (await post(api, "/v1/sandboxes", { backend })) as { id: string };
  const created = performance.now() - started;
  await bash(api, view.id, "echo first");
  return [created, performance.now() - started, view.id];
}

async function remove(api: Api, id: string): Promise<void> {
  await fetch(`${api.url}/v1/sandboxes/${id}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${api.token}` },
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const ms = (x: number) => `${x.toFixed(0)} ms`;

/** Cold (create + first result) and warm (a next command's result) on one backend. */
async function lifecycle(api: Api, backend: "host" | "container") {
  const create: number[] = [];
  const first: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const [c, f, id] = await createAndFirst(api, backend);
    create.push(c);
    first.push(f);
    warm.push(await bash(api, id, "echo again"));
    await remove(api, id);
  }
  return { create: median(create), first: median(first), warm: median(warm) };
}

export default async function containersBench(): Promise<void> {
  const host = await startWith("test/e2e/global-setup.ts", "apiUrl", "apiToken");
  if (typeof host === "string") throw new Error(host);
  const onHost = await lifecycle(host, "host").finally(() => host.stop());

  const ct = await startWith(
    "test/containers/global-setup.ts",
    "containersApiUrl",
    "containersApiToken",
  );
  if (typeof ct === "string") {
    console.log(`container backend not measured: ${ct}`);
    return;
  }
  try {
    const inContainer = await lifecycle(ct, "container");
    console.log(
      `median of ${ROUNDS}; "first result": create + bash \`echo first\` to its settled result`,
    );
    console.log("| backend | create | create + first result | a next command (warm) |");
    console.log("|---|---|---|---|");
    console.log(`| host | ${ms(onHost.create)} | ${ms(onHost.first)} | ${ms(onHost.warm)} |`);
    console.log(
      `| container (cold: a new container) | ${ms(inContainer.create)} | ${ms(inContainer.first)} | ${ms(inContainer.warm)} |`,
    );
    console.log(
      `container / host: create ${(inContainer.create / onHost.create).toFixed(1)}x, create + first ${(inContainer.first / onHost.first).toFixed(1)}x, warm ${(inContainer.warm / onHost.warm).toFixed(1)}x`,
    );

    const [, , id] = await createAndFirst(ct, "container");
    const api: number[] = [];
    const file: number[] = [];
    for (let i = 0; i < Math.min(ROUNDS, 3); i++) {
      api.push(await bash(ct, id, BIG));
      const carried = totalBytes.get(BIG);
      if (carried !== 400_000_000)
        throw new Error(`the API run carried ${carried} bytes, not 400 MB`);
      file.push(await bash(ct, id, `${BIG} > big.out`));
      await bash(ct, id, "rm big.out");
    }
    await remove(ct, id);
    const [a, f] = [median(api), median(file)];
    console.log(`\n\`${BIG}\` in one container, median of ${api.length}`);
    console.log("| where the 400 MB go | time to result | MB/s |");
    console.log("|---|---|---|");
    console.log(
      `| through the API (spill + tail window) | ${ms(a)} | ${(400 / (a / 1000)).toFixed(0)} |`,
    );
    console.log(`| into a file in the container | ${ms(f)} | ${(400 / (f / 1000)).toFixed(0)} |`);
    console.log(`API / file: ${(a / f).toFixed(2)}x`);
  } finally {
    await ct.stop();
  }
}
