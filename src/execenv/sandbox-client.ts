import { SHELL_UPDATE_KINDS } from "../protocol/index.ts";
import { SandboxHttpError, SandboxStreamError, SandboxUnreachableError } from "./errors.ts";
import { readNdjson } from "./ndjson.ts";
import { fetchIdempotent } from "./transient-retry.ts";
import type {
  EditRequest,
  EditResult,
  ExecRequest,
  FindRequest,
  FindResult,
  GlobRequest,
  GlobResult,
  GrepRequest,
  GrepResult,
  InputRequest,
  InputState,
  LsRequest,
  LsResult,
  ReadRequest,
  ReadResult,
  ShellUpdate,
  TerminalPaint,
  TerminalSize,
  WriteRequest,
  WriteResult,
} from "./types.ts";

/** Answer of `POST /v1/exec/:execId/kill`. */
interface KillResult {
  execId: string;
  status: "killing" | "exited";
}

/**
 * Talks to one sandbox host over HTTP. Runs in Workers, Node and browsers (fetch only).
 * Failures are typed: `SandboxUnreachableError` (no answer), `SandboxHttpError` (an
 * error status with the host's code and message), `SandboxStreamError` (an exec stream
 * that broke off before `exit`; reattach to resume).
 * @example
 * const client = new SandboxClient("http://127.0.0.1:8788", token);
 * for await (const u of client.exec({ execId: "a1", command: "seq 3" })) console.log(u);
 */
export class SandboxClient {
  readonly baseUrl: string;
  readonly #token: string;
  readonly #fetchImpl: typeof fetch;

  constructor(
    baseUrl: string,
    token: string,
    fetchImpl: typeof fetch = (input, init) => fetch(input, init),
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.#token = token;
    this.#fetchImpl = fetchImpl;
  }

  /**
   * Starts a command and yields its Shell updates: a `replace` base first, `exit` last.
   * A second `exec` with the same id is refused (409); use `reattach`.
   */
  exec(req: ExecRequest, signal?: AbortSignal): AsyncGenerator<ShellUpdate> {
    return this.#stream("POST", "/v1/exec", req, signal);
  }

  /** Re-joins a running or recently finished exec: a `replace` base, then live updates or `exit`. */
  reattach(execId: string, signal?: AbortSignal): AsyncGenerator<ShellUpdate> {
    return this.#stream("GET", `/v1/exec/${encodeURIComponent(execId)}`, undefined, signal);
  }

  /** Terminates the exec's whole process group (SIGTERM, then SIGKILL after a grace). */
  kill(execId: string, signal?: AbortSignal): Promise<KillResult> {
    return this.#json<KillResult>(
      "POST",
      `/v1/exec/${encodeURIComponent(execId)}/kill`,
      {},
      signal,
    );
  }

  /**
   * Sends input to a running exec (its terminal, or its stdin pipe) and answers, once the
   * output settles or after `req.waitMs`, where its input stands: the screen, and whether
   * it waits for input. Not retried: input is not idempotent.
   */
  input(execId: string, req: InputRequest, signal?: AbortSignal): Promise<InputState> {
    return this.#json<InputState>(
      "POST",
      `/v1/exec/${encodeURIComponent(execId)}/input`,
      req,
      signal,
      { idempotent: false },
    );
  }

  /** Where a running or recent exec's input stands (its screen, whether it waits for input). */
  terminal(execId: string, signal?: AbortSignal): Promise<InputState> {
    return this.#json<InputState>(
      "GET",
      `/v1/exec/${encodeURIComponent(execId)}/terminal`,
      undefined,
      signal,
    );
  }

  /** The bytes that draw a running tty exec's screen again, and the output byte it shows (decision 191). */
  paint(execId: string, signal?: AbortSignal): Promise<TerminalPaint> {
    return this.#json<TerminalPaint>(
      "GET",
      `/v1/exec/${encodeURIComponent(execId)}/paint`,
      undefined,
      signal,
    );
  }

  /** Resizes an exec's terminal. */
  resize(execId: string, size: TerminalSize, signal?: AbortSignal): Promise<InputState> {
    return this.#json<InputState>(
      "POST",
      `/v1/exec/${encodeURIComponent(execId)}/resize`,
      size,
      signal,
    );
  }

  /**
   * The first `bytes` bytes of an exec's spill file (its complete output), or fewer when
   * the output is shorter; empty when the exec kept no spill.
   */
  async spillHead(execId: string, bytes: number, signal?: AbortSignal): Promise<Uint8Array> {
    const path = `/v1/exec/${encodeURIComponent(execId)}/spill`;
    let res: Response;
    try {
      res = await this.#request("GET", path, undefined, signal, {
        idempotent: true,
        headers: { range: `bytes=0-${bytes - 1}` },
      });
    } catch (err) {
      if (err instanceof SandboxHttpError && (err.status === 404 || err.status === 416)) {
        return new Uint8Array(0);
      }
      throw err;
    }
    const all = new Uint8Array(await res.arrayBuffer());
    return all.length > bytes ? all.subarray(0, bytes) : all;
  }

  /** A window of lines of a workspace file. */
  read(req: ReadRequest, signal?: AbortSignal): Promise<ReadResult> {
    return this.#json<ReadResult>("POST", "/v1/read", req, signal);
  }

  /** Matching lines, at most `limit`; the search stops at the probe. */
  grep(req: GrepRequest, signal?: AbortSignal): Promise<GrepResult> {
    return this.#json<GrepResult>("POST", "/v1/grep", req, signal);
  }

  /** Paths matching a glob, at most `limit`; the listing stops at the probe. */
  glob(req: GlobRequest, signal?: AbortSignal): Promise<GlobResult> {
    return this.#json<GlobResult>("POST", "/v1/glob", req, signal);
  }

  /** Paths matching a glob with pi's `find` rules (hidden files too, relative to `path`). */
  find(req: FindRequest, signal?: AbortSignal): Promise<FindResult> {
    return this.#json<FindResult>("POST", "/v1/find", req, signal);
  }

  /** A directory's entries, sorted, `/` after directories, at most `limit`. */
  ls(req: LsRequest, signal?: AbortSignal): Promise<LsResult> {
    return this.#json<LsResult>("POST", "/v1/ls", req, signal);
  }

  /**
   * Replaces a file's whole content atomically, creating parent folders. Sent once, never
   * retried here: the invocation's toolCallId is what makes a change exactly-once.
   */
  write(req: WriteRequest, signal?: AbortSignal): Promise<WriteResult> {
    return this.#json<WriteResult>("POST", "/v1/write", req, signal, { idempotent: false });
  }

  /**
   * Applies exact-text replacements to a file (pi's edit rules) and replaces it atomically.
   * Sent once: a retry after a lost answer would find the edit applied and refuse it.
   */
  edit(req: EditRequest, signal?: AbortSignal): Promise<EditResult> {
    return this.#json<EditResult>("POST", "/v1/edit", req, signal, { idempotent: false });
  }

  /** Reads (read, grep, glob, find, ls) and kill are idempotent: a transient failure is retried. */
  async #json<T>(
    method: string,
    path: string,
    body: unknown,
    signal?: AbortSignal,
    options: { idempotent: boolean } = { idempotent: true },
  ): Promise<T> {
    const res = await this.#request(method, path, body, signal, options);
    return (await res.json()) as T;
  }

  async *#stream(
    method: string,
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): AsyncGenerator<ShellUpdate> {
    const res = await this.#request(method, path, body, signal);
    if (!res.body) throw new SandboxStreamError("sandbox answered an exec request without a body");
    try {
      for await (const value of readNdjson(res.body)) {
        const update = asShellUpdate(value);
        yield update;
        if (update.kind === "exit") return;
      }
    } catch (err) {
      if (err instanceof SandboxStreamError || signal?.aborted) throw err;
      throw new SandboxStreamError(
        `exec stream broke off (${(err as Error).message}); reattach to resume`,
        err,
      );
    }
    throw new SandboxStreamError("exec stream ended before its exit line; reattach to resume");
  }

  async #request(
    method: string,
    path: string,
    body: unknown,
    signal?: AbortSignal,
    /** `idempotent`: a transient failure is retried (reads and kill, never exec). */
    options: { idempotent?: boolean; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const url = `${this.baseUrl}${path}`;
    const headers: Record<string, string> = {
      ...options.headers,
      authorization: `Bearer ${this.#token}`,
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      const init: RequestInit = {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      };
      res = options.idempotent
        ? await fetchIdempotent(this.#fetchImpl, url, init)
        : await this.#fetchImpl(url, init);
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new SandboxUnreachableError(this.baseUrl, err);
    }
    if (!res.ok) throw await httpError(res);
    return res;
  }
}

async function httpError(res: Response): Promise<SandboxHttpError> {
  const text = await res.text().catch(() => "");
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const { code, message } = parsed.error ?? {};
    if (typeof code === "string" && typeof message === "string") {
      return new SandboxHttpError(res.status, code, message);
    }
  } catch {}
  return new SandboxHttpError(res.status, "http_error", text.slice(0, 200) || res.statusText);
}

function asShellUpdate(value: unknown): ShellUpdate {
  const kind = (value as { kind?: unknown } | null)?.kind;
  if (typeof kind !== "string" || !SHELL_UPDATE_KINDS.has(kind)) {
    throw new SandboxStreamError(
      `unexpected line in exec stream: ${JSON.stringify(value).slice(0, 80)}`,
    );
  }
  return value as ShellUpdate;
}
