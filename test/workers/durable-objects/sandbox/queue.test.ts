// Accepted calls never fail for want of a slot (issue 30, decision 248). The "crowded"
// sandbox host runs 2 commands at once and keeps 2 more in line: calls past the 2 are
// accepted (201) and show as queued, with how many are ahead, until their turn; a call
// past the line's bound is refused at create with 429 and Retry-After, and nothing of it
// is kept; a cancel while queued ends the call without its command ever running; a file
// tool is never held up by the line.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { API_TOKEN } from "../../worker/helpers.ts";

const ORIGIN = "http://127.0.0.1";
const SANDBOX = "crowded";

function send(method: string, path: string, json?: unknown): Promise<Response> {
  const headers = new Headers({ Host: "127.0.0.1", Authorization: `Bearer ${API_TOKEN}` });
  if (json !== undefined) headers.set("content-type", "application/json");
  const body = json === undefined ? undefined : JSON.stringify(json);
  return exports.default.fetch(new Request(`${ORIGIN}${path}`, { method, headers, body }));
}

let counter = 0;
const fresh = (label: string) => `${label}-${++counter}-${crypto.randomUUID().slice(0, 8)}`;

async function create(tool: string, args: unknown, id = fresh(tool)): Promise<Response> {
  return send("POST", "/v1/invocations", { tool, args, sandbox: SANDBOX, toolCallId: id });
}

interface View {
  status: "running" | "settled";
  isError?: boolean;
  cancelled?: boolean;
  state: { content: { text?: string }[]; details: Record<string, unknown> };
}

async function viewOf(id: string): Promise<View> {
  const res = await send("GET", `/v1/invocations/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as View;
}

async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts a bash call held until `gate` exists in the workspace; returns its id. */
async function held(gate: string, mark = ""): Promise<string> {
  const id = fresh("held");
  const command = `${mark}until [ -e ${gate} ]; do sleep 0.05; done; echo ran`;
  const res = await create("bash", { command }, id);
  expect(res.status, await res.clone().text()).toBe(201);
  return id;
}

const queuedOf = async (id: string) => (await viewOf(id)).state.details.queued;

async function settled(id: string): Promise<View> {
  return until(`${id} to settle`, async () => {
    const view = await viewOf(id);
    return view.status === "settled" ? view : undefined;
  });
}

describe("a sandbox's line of commands, through the Worker", () => {
  it("calls past the running limit are accepted and queued; past the line they are refused with 429 and Retry-After; the queued ones then run", async () => {
    const gate = `go-${fresh("gate")}`;
    const running = [await held(gate), await held(gate)];
    for (const id of running) {
      await until(`${id} to run`, async () =>
        (await viewOf(id)).status === "running" ? 1 : undefined,
      );
    }
    const first = await held(gate);
    await until("the first to wait", async () => ((await queuedOf(first)) === 0 ? 1 : undefined));
    const second = await held(gate);
    await until("the second to wait", async () => ((await queuedOf(second)) === 1 ? 1 : undefined));
    for (const id of running) expect(await queuedOf(id)).toBeUndefined();

    const refusedId = fresh("refused");
    const refused = await create("bash", { command: "echo never" }, refusedId);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(await refused.json()).toEqual({
      error: {
        code: "too_many_requests",
        message: `sandbox "${SANDBOX}" runs its limit of 2 commands at once and 2 more wait their turn, the most it queues; nothing was started: retry with the same toolCallId in 5 s`,
      },
    });
    // Nothing of the refused call was kept: the same id can be created once there is room.
    expect((await send("GET", `/v1/invocations/${refusedId}`)).status).toBe(404);

    // A file tool does not wait in the commands' line: it opens the gate.
    const write = await create("write", { path: gate, content: "" });
    expect(write.status).toBe(201);

    for (const id of [...running, first, second]) {
      const view = await settled(id);
      expect(view.isError).toBe(false);
      expect(view.state.content[0]?.text).toBe("ran\n");
      expect(view.state.details.queued).toBeUndefined();
      expect(view.state.details.exitCode).toBe(0);
    }
    const retried = await create("bash", { command: "echo now" }, refusedId);
    expect(retried.status).toBe(201);
    expect((await settled(refusedId)).state.content[0]?.text).toBe("now\n");
  }, 60_000);

  it("a cancel while queued ends the call, and its command never runs", async () => {
    const gate = `go-${fresh("gate")}`;
    const running = [await held(gate), await held(gate)];
    for (const id of running) {
      await until(`${id} to run`, async () =>
        (await viewOf(id)).status === "running" ? 1 : undefined,
      );
    }
    const mark = `never-${fresh("mark")}`;
    const victim = await held(gate, `touch ${mark}; `);
    await until("the victim to wait", async () => ((await queuedOf(victim)) === 0 ? 1 : undefined));
    const cancel = await send("POST", `/v1/invocations/${victim}/cancel`);
    expect(cancel.status).toBe(200);
    const ended = await settled(victim);
    expect(ended).toMatchObject({ isError: true, cancelled: true });
    expect(ended.state.details.queued).toBeUndefined();
    expect((await create("write", { path: gate, content: "" })).status).toBe(201);
    for (const id of running) expect((await settled(id)).isError).toBe(false);
    const look = await create("bash", { command: `test -e ${mark} && echo ran || echo never-ran` });
    const lookId = ((await look.json()) as { id: string }).id;
    expect((await settled(lookId)).state.content[0]?.text).toBe("never-ran\n");
  }, 60_000);
});
