/** The Worker's HTTP API as the create-to-first-output benches use it. */

export interface Api {
  url: string;
  token: string;
}

let calls = 0;

/** A JSON request with the API token; throws with the status and body unless 2xx. */
export async function request(
  api: Api,
  method: string,
  route: string,
  body?: unknown,
): Promise<unknown> {
  const res = await fetch(`${api.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${api.token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/**
 * Runs `echo first` (in `sandbox`, or "new" for `runId`'s own) until its result;
 * answers the sandbox used. With `waitInCreate` the create itself waits for the result
 * (`POST /v1/invocations?wait=30`): one request where the Worker supports it, the
 * result route after it where it does not (an older checkout).
 */
export async function echo(
  api: Api,
  sandbox: string,
  runId?: string,
  waitInCreate = false,
): Promise<string> {
  const toolCallId = `bench_echo_${process.pid}_${++calls}`;
  const made = (await request(api, "POST", `/v1/invocations${waitInCreate ? "?wait=30" : ""}`, {
    tool: "bash",
    args: { command: "echo first" },
    sandbox,
    toolCallId,
    ...(runId ? { runId } : {}),
  })) as { sandbox?: string; status: string; result?: { content: { text?: string }[] } };
  if (made.status === "settled") {
    if (!JSON.stringify(made.result).includes("first")) throw new Error("echo answered no 'first'");
    return made.sandbox ?? sandbox;
  }
  for (;;) {
    const res = await fetch(`${api.url}/v1/invocations/${toolCallId}/result?wait=30`, {
      headers: { authorization: `Bearer ${api.token}` },
    });
    const text = await res.text();
    if (res.status === 200) {
      if (!text.includes("first")) throw new Error(`echo answered ${text}`);
      return made.sandbox ?? sandbox;
    }
    if (res.status !== 202) throw new Error(`result: ${res.status} ${text}`);
  }
}
