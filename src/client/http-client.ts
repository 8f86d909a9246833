import type { JsonValue } from "../core/chord/types.ts";
import type { ProducerCall, SettledResult } from "../core/output/types.ts";
import type { FirstMomentAnswer, InvocationView, ResultPoll } from "../protocol/index.ts";

export type { ProducerCall };

import type { InvocationAddress } from "./endpoints.ts";
import { errorFromResponse, isRecord, ToolwireError, unreachable } from "./errors.ts";
import { canUpgradeOverFetch, fetchSocket } from "./fetch-socket.ts";
import { OutputProducer, type OutputProducerOptions } from "./output-producer.ts";
import type { SocketFactory } from "./socket-transport.ts";
import { type SubscribeOptions, type Subscription, subscribe } from "./subscription.ts";
import { TerminalClient } from "./terminal-client.ts";

export interface ToolwireClientOptions {
  /** e.g. `http://127.0.0.1:8787` */
  baseUrl: string;
  /** The API token, sent as `Authorization: Bearer …`. */
  token?: string;
  /** A subscribe token instead: read-only, one invocation (what a viewer page has). */
  subscribeToken?: string;
  fetch?: typeof fetch;
}

export interface CreateInvocationRequest {
  tool: string;
  args?: JsonValue;
  toolCallId?: string;
  runId?: string;
  turnId?: string;
  sandbox?: string;
}

export interface CreatedInvocation {
  id: string;
  toolCallId: string;
  status: "running" | "settled";
  subscribeToken: string;
  socketUrl: string;
  eventsUrl: string;
  viewUrl: string;
  /** The run page, when the call was created with a `runId` of its own. */
  runViewUrl?: string;
  /** False when the same `toolCallId` named an existing invocation (HTTP 200). */
  created: boolean;
  /** A `bash { background: true }` call: what it printed in its first moment. */
  firstMoment?: FirstMomentAnswer;
}

/** Fresh links to one call (`GET /v1/invocations/:id/links`): a new subscribe token, an hour long. */
interface InvocationLinks {
  id: string;
  subscribeToken: string;
  socketUrl: string;
  eventsUrl: string;
  viewUrl: string;
}

/** An invocation as the API answers with it: the protocol's `InvocationView`. */
export type InvocationInfo = InvocationView;

export type { ResultPoll };

/** What `POST /v1/invocations/:id/attach` answers: the write capability and its link. */
export interface AttachGrant extends InvocationLinks {
  /** Who the token types as. */
  name: string;
  /** Goes in `Authorization: Bearer` of the terminal's input and resize routes; an hour. */
  attachToken: string;
  /** The viewer link with the token in its fragment: whoever opens it can type. */
  attachUrl: string;
  /** For a call of a run: the run page with the token and the call in its fragment. */
  runAttachUrl?: string;
}

export interface ToolInfo {
  name: string;
  description: string;
  parameters: JsonValue;
  output?: { retain: "head" | "tail"; maxBytes: number; maxLines: number };
  /** A built-in example (`emit`, `steps`, `report`): callable, not offered in lists. */
  example?: boolean;
}

/**
 * The Toolwire HTTP API, typed. Every failure throws a `ToolwireError` with the
 * server's `code` and `message` and the HTTP `status`.
 *
 * @example
 * const tw = new ToolwireClient({ baseUrl: "http://127.0.0.1:8787", token: process.env.TOOLWIRE_TOKEN });
 * const inv = await tw.createInvocation({ tool: "bash", args: { command: "ls" } });
 * const poll = await tw.result(inv.id, { wait: 30 });
 */
export class ToolwireClient {
  readonly baseUrl: string;
  readonly #token: string | undefined;
  readonly #subscribeToken: string | undefined;
  readonly #doFetch: typeof fetch;
  /** Sockets through `fetch` (a service binding in a Worker), else the platform's WebSocket. */
  readonly #createSocket: SocketFactory | undefined;

  constructor(options: ToolwireClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
    this.#subscribeToken = options.subscribeToken;
    this.#doFetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#createSocket =
      options.fetch && canUpgradeOverFetch() ? fetchSocket(options.fetch) : undefined;
  }

  async createInvocation(request: CreateInvocationRequest): Promise<CreatedInvocation> {
    const { body, status } = await this.#call(
      "POST",
      "/v1/invocations",
      request,
      "Creating the invocation",
    );
    const created = expectRecord(body, "the created invocation");
    for (const key of ["id", "subscribeToken", "socketUrl", "eventsUrl", "viewUrl"] as const) {
      if (typeof created[key] !== "string") throw badBody(`the created invocation has no ${key}`);
    }
    return { ...(created as unknown as CreatedInvocation), created: status === 201 };
  }

  async get(id: string): Promise<InvocationInfo> {
    const { body } = await this.#call("GET", this.#path(id), undefined, `Reading invocation ${id}`);
    return expectInvocation(body);
  }

  /** Waits up to `wait` seconds on the server for the invocation to settle. */
  async result(id: string, options: { wait?: number } = {}): Promise<ResultPoll> {
    const query = options.wait ? `?wait=${options.wait}` : "";
    const { body, status } = await this.#call(
      "GET",
      `${this.#path(id)}/result${query}`,
      undefined,
      `Reading the result of ${id}`,
    );
    if (status === 202) return { status: "running" };
    const result = expectRecord(body, "the result");
    if (!Array.isArray(result.content)) throw badBody("the result has no content");
    return { status: "settled", result: result as unknown as SettledResult };
  }

  /**
   * New links to a call that exists, for when a viewer link has expired (API token only).
   * @example (await client.links("call_1")).viewUrl
   */
  async links(id: string): Promise<InvocationLinks> {
    const { body } = await this.#call("GET", `${this.#path(id)}/links`, undefined, `Linking ${id}`);
    const links = expectRecord(body, "the links");
    if (typeof links.viewUrl !== "string") throw badBody("the links have no viewUrl");
    return links as unknown as InvocationLinks;
  }

  /**
   * The write capability for a running tty call's terminal (decision 191): an attach
   * token that types as `name`, and the viewer link that carries it (API token, or the
   * call's own sandbox's token).
   * @example const { attachToken, attachUrl } = await client.attach("call_1", "ada");
   */
  async attach(id: string, name?: string): Promise<AttachGrant> {
    const { body } = await this.#call(
      "POST",
      `${this.#path(id)}/attach`,
      name === undefined ? {} : { name },
      `Attaching to ${id}`,
    );
    const grant = expectRecord(body, "the attach answer");
    if (typeof grant.attachToken !== "string")
      throw badBody("the attach answer has no attachToken");
    return grant as unknown as AttachGrant;
  }

  /**
   * Call `id`'s terminal: its screen, and with an attach token a person's keys and size.
   * @example const term = client.terminal("call_1", attachToken); await term.type("q");
   */
  terminal(id: string, attachToken?: string): TerminalClient {
    return new TerminalClient({
      baseUrl: this.baseUrl,
      id,
      fetch: this.#doFetch,
      ...(this.#token ? { token: this.#token } : {}),
      ...(this.#subscribeToken ? { subscribeToken: this.#subscribeToken } : {}),
      ...(attachToken ? { attachToken } : {}),
    });
  }

  /** A new run page link for run `runId` (API token only). */
  async runLinks(runId: string): Promise<{ runId: string; runViewUrl: string }> {
    const { body } = await this.#call(
      "GET",
      `/v1/runs/${encodeURIComponent(runId)}/links`,
      undefined,
      `Linking run ${runId}`,
    );
    const links = expectRecord(body, "the run links");
    if (typeof links.runViewUrl !== "string") throw badBody("the run links have no runViewUrl");
    return links as unknown as { runId: string; runViewUrl: string };
  }

  /**
   * A settled call's whole output, every byte the command printed, as a stream (`GET
   * /v1/invocations/:id/spill`): what `toolwire output <id>` writes.
   * @example for await (const chunk of await client.wholeOutput("call_1")) process.stdout.write(chunk);
   */
  async wholeOutput(id: string): Promise<ReadableStream<Uint8Array>> {
    const url = new URL(`${this.baseUrl}${this.#path(id)}/spill`);
    if (this.#subscribeToken && !this.#token) url.searchParams.set("token", this.#subscribeToken);
    let res: Response;
    try {
      res = await this.#doFetch(url.toString(), { headers: this.#authHeaders() });
    } catch (error) {
      throw unreachable(this.baseUrl, error);
    }
    if (!res.ok) throw await errorFromResponse(res, `Reading the whole output of ${id}`);
    if (!res.body) throw badBody("the whole output has no body");
    return res.body;
  }

  async cancel(id: string): Promise<InvocationInfo> {
    const { body } = await this.#call("POST", `${this.#path(id)}/cancel`, {}, `Cancelling ${id}`);
    return expectInvocation(body);
  }

  /**
   * Producer API: feeds an `external` invocation's output; `end` settles it. Without
   * `seq` a retried call may apply twice; `producer(id)` numbers and retries bodies.
   */
  async output(
    id: string,
    calls: ProducerCall[],
    end?: { isError: boolean; error?: string },
    options: { seq?: number } = {},
  ): Promise<InvocationInfo> {
    const payload: Record<string, unknown> = { calls };
    if (end) payload.end = end;
    if (options.seq !== undefined) payload.seq = options.seq;
    const { body } = await this.#call(
      "POST",
      `${this.#path(id)}/output`,
      payload,
      `Writing output to ${id}`,
    );
    return expectInvocation(body);
  }

  /**
   * An idempotent producer for an `external` invocation: every body gets the next
   * `seq` and is retried with it until it is answered, so each lands exactly once.
   * @example
   * const out = client.producer(inv.id);
   * await out.send([{ write: "step 1\n" }]);
   * await out.send([], { isError: false });
   */
  producer(id: string, options: OutputProducerOptions = {}): OutputProducer {
    return new OutputProducer((calls, end, seq) => this.output(id, calls, end, { seq }), options);
  }

  async tools(): Promise<ToolInfo[]> {
    const { body } = await this.#call("GET", "/v1/tools", undefined, "Listing tools");
    const list = isRecord(body) ? body.tools : undefined;
    if (!Array.isArray(list)) throw badBody("the tool list is missing");
    return list as ToolInfo[];
  }

  /**
   * Follows an invocation live. Given an id, authenticates with the API token (Node
   * only: browsers cannot set headers on a WebSocket), which does not expire: use this
   * for anything that may run longer than an hour. Given what `createInvocation`
   * returned, uses its subscribe token, which expires (1 h): a reconnect after that is
   * refused.
   */
  subscribe(invocation: string | CreatedInvocation, options: SubscribeOptions = {}): Subscription {
    if (typeof invocation !== "string") {
      return subscribe(options.transport === "sse" ? invocation.eventsUrl : invocation.socketUrl, {
        fetch: this.#doFetch,
        createSocket: this.#createSocket,
        ...options,
      });
    }
    const address: InvocationAddress = { baseUrl: this.baseUrl, id: invocation };
    if (this.#subscribeToken) address.token = this.#subscribeToken;
    return subscribe(address, {
      fetch: this.#doFetch,
      createSocket: this.#createSocket,
      ...options,
      headers: { ...this.#authHeaders(), ...options.headers },
    });
  }

  #path(id: string): string {
    return `/v1/invocations/${encodeURIComponent(id)}`;
  }

  #authHeaders(): Record<string, string> {
    return this.#token ? { authorization: `Bearer ${this.#token}` } : {};
  }

  async #call(
    method: "GET" | "POST",
    path: string,
    payload: unknown,
    what: string,
  ): Promise<{ body: unknown; status: number }> {
    const url = new URL(this.baseUrl + path);
    if (this.#subscribeToken && !this.#token) url.searchParams.set("token", this.#subscribeToken);
    const headers: Record<string, string> = { accept: "application/json", ...this.#authHeaders() };
    const init: RequestInit = { method, headers };
    if (payload !== undefined) {
      headers["content-type"] = "application/json";
      init.body = JSON.stringify(payload);
    }
    let res: Response;
    try {
      res = await this.#doFetch(url.toString(), init);
    } catch (error) {
      throw unreachable(this.baseUrl, error);
    }
    if (!res.ok) throw await errorFromResponse(res, what);
    const text = await res.text();
    try {
      return { body: JSON.parse(text), status: res.status };
    } catch {
      throw new ToolwireError(
        "bad_response",
        `${what}: ${this.baseUrl} answered HTTP ${res.status} with something that is not JSON. Is this the Toolwire URL?`,
        res.status,
      );
    }
  }
}

function badBody(message: string): ToolwireError {
  return new ToolwireError("bad_response", `Unexpected answer from the server: ${message}.`, 200);
}

function expectRecord(body: unknown, what: string): Record<string, unknown> {
  if (!isRecord(body)) throw badBody(`${what} is not an object`);
  return body;
}

function expectInvocation(body: unknown): InvocationInfo {
  const view = expectRecord(body, "the invocation");
  if (typeof view.id !== "string" || !isRecord(view.state)) {
    throw badBody("the invocation has no id or state");
  }
  return view as unknown as InvocationInfo;
}
