/**
 * One `container` sandbox's container (decision 144): a Cloudflare Containers instance
 * of the sandbox host image (container/Dockerfile), one per sandbox id. The Sandbox DO
 * boots it at create and shuts it down when the sandbox ends; every request of the
 * Worker and of the Invocation DO reaches the container through this object's `fetch`,
 * which adds the container's own token (made here at boot, never known to the Worker).
 * A container that stopped is never started again behind the sandbox's back: requests
 * then answer 404 saying how it stopped, and the Sandbox DO marks the sandbox lost.
 * The warm pool (decision 230) starts some ahead with `warm`, under the id of a sandbox
 * not made yet; such a container answers nothing until `claim` assigns it, once, for good.
 */
import { Container, type StopParams } from "@cloudflare/containers";
import { CONTAINER_STOPPED } from "../../src/execenv/index.ts";
import {
  CONTAINER_POOL_NAME,
  messageOf,
  type Outcome,
  ok,
  refusal,
  type SandboxContainerApi,
  workerConfig,
} from "../../src/protocol/index.ts";

/** The sandbox host's port inside the image (container/Dockerfile's PORT). */
const SANDBOX_CONTAINER_PORT = 8080;

/** How long a boot waits for the sandbox host to listen: the image's cold start is ~1 s. */
const BOOT_TIMEOUT_MS = 30_000;

/** How long a failed request waits for the runtime to report that the container stopped. */
const STOP_NOTICE_MS = 3000;

interface Booted {
  sandboxId: string;
  token: string;
  /** False while a pooled container waits for its sandbox; absent (booted for one): true. */
  assigned?: boolean;
}

interface Stopped {
  exitCode: number;
  reason: string;
  at: number;
}

export class SandboxContainer extends Container<Env> implements SandboxContainerApi {
  override defaultPort = SANDBOX_CONTAINER_PORT;
  // Only a backstop (8 days): the Sandbox DO's idle alarm (at most 7 days) ends the sandbox and
  // shuts this container down; sleeping earlier would lose the sandbox's files.
  override sleepAfter = "192h";
  // The default; `boot` starts a sandbox that has a network policy with internet (decision 183).
  override enableInternet = false;

  async boot(sandboxId: string, options: { internet: boolean }): Promise<Outcome<null>> {
    return this.#start(sandboxId, options.internet, true);
  }

  async warm(sandboxId: string): Promise<Outcome<null>> {
    // Pooled containers serve only creates that name no network (decision 230).
    return this.#start(sandboxId, false, false);
  }

  async claim(sandboxId: string): Promise<Outcome<null>> {
    const booted = await this.ctx.storage.get<Booted>("booted");
    if (!booted || booted.sandboxId !== sandboxId || booted.assigned !== false) {
      return refusal("conflict", `no pooled container waits under ${sandboxId}`);
    }
    if ((await this.ctx.storage.get<Stopped>("stopped")) || !this.ctx.container?.running) {
      await this.shutdown();
      return refusal("gone", `the pooled container ${sandboxId} is no longer running`);
    }
    await this.ctx.storage.put<Booted>("booted", { ...booted, assigned: true });
    return ok(null);
  }

  /** Starts the container with a token of its own and waits for its sandbox host to listen. */
  async #start(sandboxId: string, internet: boolean, assigned: boolean): Promise<Outcome<null>> {
    if (await this.ctx.storage.get<Booted>("booted")) {
      return refusal("conflict", `the container of ${sandboxId} was already started`);
    }
    const token = [...crypto.getRandomValues(new Uint8Array(24))]
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("");
    await this.ctx.storage.put<Booted>("booted", { sandboxId, token, assigned });
    try {
      await this.startAndWaitForPorts({
        ports: SANDBOX_CONTAINER_PORT,
        startOptions: {
          envVars: {
            SANDBOX_TOKEN: token,
            ...(workerConfig(this.env).containerEgressAllowPrivate
              ? { SANDBOX_EGRESS_ALLOW_PRIVATE: "1" }
              : {}),
          },
          // The sandbox's proxy, in the container, is what reaches out for its commands
          // (their namespace holds only loopback); a sandbox without a network keeps the
          // platform's block too (decision 183).
          enableInternet: internet,
        },
        cancellationOptions: { portReadyTimeoutMS: BOOT_TIMEOUT_MS },
      });
    } catch (err) {
      await this.destroy().catch(() => {});
      return refusal(
        "sandbox_unreachable",
        `the container of sandbox ${sandboxId} did not start (${messageOf(err)}); create another sandbox`,
      );
    }
    return ok(null);
  }

  async shutdown(): Promise<void> {
    await this.ctx.storage.put<Stopped>("stopped", {
      exitCode: 0,
      reason: "its sandbox ended",
      at: Date.now(),
    });
    await this.destroy().catch(() => {});
  }

  override async fetch(request: Request): Promise<Response> {
    const booted = await this.ctx.storage.get<Booted>("booted");
    const stopped = await this.ctx.storage.get<Stopped>("stopped");
    if (!booted || booted.assigned === false || stopped) {
      return gone(booted?.sandboxId ?? null, stopped ?? null);
    }
    const headers = new Headers(request.headers);
    headers.set("authorization", `Bearer ${booted.token}`);
    let res: Response | null = null;
    try {
      res = await this.containerFetch(new Request(request, { headers }), SANDBOX_CONTAINER_PORT);
    } catch {}
    // The sandbox host answers errors as JSON; anything else is the runtime's own
    // (e.g. "Container suddenly disconnected"): if the container has just stopped, say so.
    if (res && (res.status < 500 || isJson(res))) return res;
    const stop = await this.#stopWithin(STOP_NOTICE_MS);
    if (stop) {
      await res?.body?.cancel();
      return gone(booted.sandboxId, stop);
    }
    return res ?? new Response("the container did not answer", { status: 502 });
  }

  /** The stop `onStop` records, waited for: the runtime may report a lost connection first. */
  async #stopWithin(ms: number): Promise<Stopped | null> {
    const deadline = Date.now() + ms;
    for (;;) {
      const stopped = await this.ctx.storage.get<Stopped>("stopped");
      if (stopped || Date.now() >= deadline) return stopped ?? null;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  override async onStop(params: StopParams): Promise<void> {
    if (!(await this.ctx.storage.get<Stopped>("stopped"))) {
      const reason =
        params.reason === "runtime_signal" ? "the platform stopped it" : "its process exited";
      await this.ctx.storage.put<Stopped>("stopped", {
        exitCode: params.exitCode,
        reason,
        at: Date.now(),
      });
    }
    // A pooled container that stopped before it was taken: the pool forgets it and refills.
    const booted = await this.ctx.storage.get<Booted>("booted");
    if (booted?.assigned === false) {
      await this.env.CONTAINER_POOL?.getByName(CONTAINER_POOL_NAME)
        .drop(booted.sandboxId)
        .catch((err: unknown) => console.warn("the warm pool did not hear of a stop:", err));
    }
  }
}

/**
 * The container DO of a `container` sandbox id (bound only by wrangler.containers.toml).
 * @example await containerOf(env, id).shutdown()
 */
export function containerOf(env: Env, id: string): SandboxContainerApi {
  if (!env.SANDBOX_CONTAINERS) {
    throw new Error("SANDBOX_CONTAINERS is not bound: deploy with wrangler.containers.toml");
  }
  return env.SANDBOX_CONTAINERS.getByName(id) as unknown as SandboxContainerApi;
}

function isJson(res: Response): boolean {
  return (res.headers.get("content-type") ?? "").startsWith("application/json");
}

/** A 404 in the host's error shape, so that every caller reads it as "this sandbox is not there". */
function gone(sandboxId: string | null, stopped: Stopped | null): Response {
  if (!stopped) {
    const message = "this sandbox has no container (it was never started)";
    return Response.json({ error: { code: "not_found", message } }, { status: 404 });
  }
  const message = `the container of sandbox ${sandboxId} stopped: ${stopped.reason} (exit code ${stopped.exitCode}, at ${new Date(stopped.at).toISOString()}); its files and running commands are gone`;
  return Response.json({ error: { code: CONTAINER_STOPPED, message } }, { status: 404 });
}
