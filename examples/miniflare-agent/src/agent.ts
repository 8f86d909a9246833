/**
 * A tiny agent Worker: `POST /run {"command", "timeout"?}` runs the command with
 * Toolwire's `bash`, follows it live over a WebSocket, and answers what an agent would
 * keep: the bounded result the model reads, how many live updates it saw, and, when the
 * output was cut, the complete output read back from Toolwire.
 */
import { ToolwireClient } from "toolwire/client";

export interface Env {
  /** The Toolwire Worker, as a service binding. */
  TOOLWIRE: Fetcher;
  /** Toolwire's API token. */
  TOOLWIRE_TOKEN: string;
}

export interface RunAnswer {
  id: string;
  /** What the model reads: the bounded text with its footer. */
  text: string;
  exitCode: number | null;
  /** "timeout", "idle" or null: why Toolwire stopped the command, if it did. */
  stoppedBy: string | null;
  truncated: boolean;
  /** Live updates the subscription folded before the call ended. */
  updates: number;
  /** Bytes of the complete output, read back when the result was cut. */
  completeBytes: number | null;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (request.method !== "POST" || url.pathname !== "/run") {
      return new Response("POST /run", { status: 404 });
    }
    const { command, timeout } = (await request.json()) as { command: string; timeout?: number };
    const client = new ToolwireClient({
      baseUrl: "http://toolwire",
      token: env.TOOLWIRE_TOKEN,
      fetch: (input, init) => env.TOOLWIRE.fetch(input, init),
    });
    const call = await client.createInvocation({
      tool: "bash",
      args: timeout === undefined ? { command } : { command, timeout },
    });
    const live = client.subscribe(call.id);
    let updates = 0;
    live.onChange(() => updates++);
    await live.finished;
    const poll = await client.result(call.id, { wait: 30 });
    if (poll.status !== "settled") throw new Error(`call ${call.id} did not settle`);
    const result = poll.result;
    const details = (result.details ?? {}) as { exitCode?: number | null; stoppedBy?: string };
    let completeBytes: number | null = null;
    if (result.truncation?.truncated) {
      const spill = await env.TOOLWIRE.fetch(`http://toolwire/v1/invocations/${call.id}/spill`, {
        headers: { authorization: `Bearer ${env.TOOLWIRE_TOKEN}` },
      });
      if (!spill.ok) throw new Error(`the complete output of ${call.id}: ${spill.status}`);
      completeBytes = (await spill.arrayBuffer()).byteLength;
    }
    const answer: RunAnswer = {
      id: call.id,
      text: result.content.map((part) => ("text" in part ? part.text : "")).join(""),
      exitCode: details.exitCode ?? null,
      stoppedBy: details.stoppedBy ?? null,
      truncated: result.truncation?.truncated ?? false,
      updates,
      completeBytes,
    };
    return Response.json(answer);
  },
};
