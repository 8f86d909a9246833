/**
 * One created sandbox's record: its backend and placement, limits, status, when it was
 * created and last used, the calls made in it, and the nonce its current token is
 * signed over (decision 250). Its alarm ends it after the idle
 * timeout (a running command counts as use); ending it, by delete or expiry, cancels
 * its calls (their output is kept) and removes it from its host. An ended record
 * answers 410 saying how it ended for `retentionDays`, then is forgotten (404).
 * One object per sandbox id (docs/decisions/142).
 */
import { DurableObject } from "cloudflare:workers";
import {
  type HostSandboxInfo,
  hostCall,
  SANDBOX_CREATE_TIMEOUT_MS,
} from "../../src/execenv/sandbox-host-api.ts";
import { CONTAINER_PLACEMENT } from "../../src/execenv/sandbox-routing.ts";
import {
  bytesEqual,
  type ExecLoad,
  type InvocationApi,
  type Outcome,
  ok,
  refusal,
  type SandboxApi,
  type SandboxBackend,
  type SandboxCreate,
  type SandboxLimits,
  type SandboxStatus,
  type SandboxView,
} from "../../src/protocol/index.ts";
import type { NetworkPolicy } from "../../src/protocol/network-policy.ts";
import type { PortGrant, SandboxPortsApi } from "../../src/protocol/preview.ts";
import { containerOf } from "./container.ts";
import { InOrder } from "./in-order.ts";
import { PortGrants } from "./port-grants.ts";

interface SandboxRecord {
  id: string;
  name: string | null;
  /** Absent in records written before the container backend: `host`. */
  backend?: SandboxBackend;
  placement: string;
  status: SandboxStatus;
  limits: SandboxLimits;
  /** Absent in records written before network policies: none. */
  network?: NetworkPolicy;
  idleTimeoutMs: number;
  retentionMs: number;
  createdAt: number;
  lastUsedAt: number;
  endedAt: number | null;
  endReason: string | null;
  /**
   * The nonce its current sandbox token is signed over (decision 250). Absent in records
   * written before sandbox tokens: no token is good until one is made with a rotation.
   */
  tokenNonce?: string;
  /**
   * A container sandbox's: whether its container was started with internet (its create
   * named a network policy; decision 183). Absent: it was not.
   */
  internet?: boolean;
  /** A container sandbox's: whether its container came from the warm pool (decision 230). */
  fromPool?: boolean;
}

/** How soon an alarm that could not reach the host tries again. */
const HOST_RETRY_MS = 60_000;

/**
 * How long after its create the first call may take the load the host answered the
 * create with, instead of asking the host again (decision 275).
 */
export const JUST_MADE_MS = 10_000;

export class SandboxDO extends DurableObject<Env> implements SandboxApi, SandboxPortsApi {
  /** Why it is ending, from the moment its end begins: a preview stops being let in then. */
  #ending: string | null = null;
  /** The last change of the record under way: changes run one at a time (see `#oneAtATime`). */
  #changing: Promise<unknown> = Promise.resolve();
  /**
   * The load its host answered the create with, until the first call takes it or
   * `JUST_MADE_MS` passes: that call needs no second question to the host (decision 275).
   */
  #justMade: { load: ExecLoad; until: number } | null = null;
  /** Its lines in the sandbox directory, written in the order they were made. */
  readonly #directory = new InOrder((err) => {
    console.error("a sandbox could not be written in the directory", err);
  });

  /**
   * Runs `change` after every change before it has settled. A change awaits the host
   * between reading the record and writing it, and the runtime lets other calls in
   * meanwhile: the idle alarm could end a sandbox that a call had just been told it may
   * use, or a use could write an ended record back as active.
   */
  #oneAtATime<T>(change: () => Promise<T>): Promise<T> {
    const next = this.#changing.then(change, change);
    this.#changing = next.catch(() => undefined);
    return next;
  }

  create(input: SandboxCreate): Promise<Outcome<SandboxView>> {
    return this.#oneAtATime(() => this.#create(input));
  }

  async #create(input: SandboxCreate): Promise<Outcome<SandboxView>> {
    if (await this.#record()) return refusal("conflict", `sandbox ${input.id} already exists`);
    const backend: SandboxBackend = input.placement === CONTAINER_PLACEMENT ? "container" : "host";
    const internet = input.network.allow.length > 0;
    // A pooled container was started ahead and claimed for this id by the pool (decision 230).
    const fromPool = backend === "container" && input.fromPool === true;
    if (backend === "container" && !fromPool) {
      const booted = await containerOf(this.env, input.id).boot(input.id, { internet });
      if (!booted.ok) return booted;
    }
    const host = backend === "container" ? input.id : input.placement;
    const made = await hostCall<HostSandboxInfo>(
      this.env,
      host,
      "POST",
      "/v1/sandboxes",
      { id: input.id, limits: input.limits, network: input.network },
      SANDBOX_CREATE_TIMEOUT_MS,
    );
    if (!made.ok) {
      if (backend === "container") await containerOf(this.env, input.id).shutdown();
      return made;
    }
    const now = Date.now();
    const record: SandboxRecord = {
      id: input.id,
      name: input.name,
      backend,
      placement: input.placement,
      status: "active",
      limits: made.value.limits,
      network: input.network,
      idleTimeoutMs: input.idleTimeoutSeconds * 1000,
      retentionMs: input.retentionDays * 86_400_000,
      createdAt: now,
      lastUsedAt: now,
      endedAt: null,
      endReason: null,
      tokenNonce: input.tokenNonce,
      ...(backend === "container" ? { internet, fromPool } : {}),
    };
    await this.#save(record);
    const load = made.value.execs;
    this.#justMade = load ? { load, until: now + JUST_MADE_MS } : null;
    return ok(viewOf(record));
  }

  async view(): Promise<Outcome<SandboxView>> {
    const record = await this.#record();
    return record ? ok(viewOf(record)) : notFound();
  }

  use(toolCallId: string | null): Promise<Outcome<SandboxView>> {
    return this.#oneAtATime(async () => {
      const used = await this.#use(toolCallId);
      return used.ok ? ok(used.value.view) : used;
    });
  }

  /**
   * `use` for a tool call that runs a command: answers how busy the sandbox's commands
   * are, as its host just said (null from a host that does not say), which the call is
   * admitted by without asking the host again (decision 258).
   */
  useForCall(toolCallId: string): Promise<Outcome<ExecLoad | null>> {
    return this.#oneAtATime(async () => {
      const used = await this.#use(toolCallId);
      return used.ok ? ok(used.value.load) : used;
    });
  }

  async #use(
    toolCallId: string | null,
  ): Promise<Outcome<{ view: SandboxView; load: ExecLoad | null }>> {
    const record = await this.#record();
    if (!record) return notFound();
    if (record.status !== "active") return gone(record);
    const justMade = toolCallId !== null ? this.#takeJustMade() : null;
    const onHost = justMade
      ? ok({ execs: justMade })
      : await hostCall<HostSandboxInfo>(
          this.env,
          hostOf(record),
          "GET",
          `/v1/sandboxes/${record.id}`,
        );
    if (!onHost.ok) {
      if (onHost.error.code !== "not_found") return onHost;
      const why =
        record.backend === "container"
          ? `its container is gone (${onHost.error.message})`
          : `its host "${record.placement}" no longer has it (${onHost.error.message})`;
      await this.#end(record, "lost", why);
      return gone(record);
    }
    record.lastUsedAt = Date.now();
    if (toolCallId !== null) await this.ctx.storage.put(`call:${toolCallId}`, true);
    // Only its last use changed: the directory's line follows without the call waiting.
    await this.#save(record, "later");
    return ok({ view: viewOf(record), load: onHost.value.execs ?? null });
  }

  /** The create's load, once, while it is fresh. */
  #takeJustMade(): ExecLoad | null {
    const made = this.#justMade;
    this.#justMade = null;
    return made && Date.now() <= made.until ? made.load : null;
  }

  setNetwork(policy: NetworkPolicy): Promise<Outcome<SandboxView>> {
    return this.#oneAtATime(() => this.#setNetwork(policy));
  }

  async #setNetwork(policy: NetworkPolicy): Promise<Outcome<SandboxView>> {
    const record = await this.#record();
    if (!record) return notFound();
    if (record.status !== "active") return gone(record);
    if (record.backend === "container" && !record.internet && policy.allow.length > 0) {
      return refusal(
        "conflict",
        `sandbox ${record.id} is a container started without internet (its create named no network), which it cannot be given later; create a container sandbox with network.allow`,
      );
    }
    const put = await hostCall<unknown>(
      this.env,
      hostOf(record),
      "PUT",
      `/v1/sandboxes/${record.id}/network`,
      policy,
    );
    if (!put.ok) return put;
    record.network = policy;
    await this.#save(record);
    return ok(viewOf(record));
  }

  async checkToken(nonce: string): Promise<Outcome<null>> {
    const record = await this.#record();
    if (!record) return notFound();
    if (record.status !== "active") return gone(record);
    if (record.tokenNonce === undefined || !sameText(record.tokenNonce, nonce)) {
      return refusal(
        "unauthorized",
        `the sandbox token was revoked: sandbox ${record.id} has a newer one (POST /v1/sandboxes/${record.id}/token made it)`,
      );
    }
    return ok(null);
  }

  rotateToken(nonce: string): Promise<Outcome<SandboxView>> {
    return this.#oneAtATime(() => this.#rotateToken(nonce));
  }

  async #rotateToken(nonce: string): Promise<Outcome<SandboxView>> {
    const record = await this.#record();
    if (!record) return notFound();
    if (record.status !== "active") return gone(record);
    record.tokenNonce = nonce;
    await this.ctx.storage.put("record", record);
    return ok(viewOf(record));
  }

  remove(): Promise<Outcome<SandboxView>> {
    return this.#oneAtATime(() => this.#remove());
  }

  async #remove(): Promise<Outcome<SandboxView>> {
    const record = await this.#record();
    if (!record) return notFound();
    if (record.status !== "active") return gone(record);
    const ended = await this.#end(record, "deleted", "it was deleted");
    return ended.ok ? ok(viewOf(record)) : ended;
  }

  /** Exposes a port (counts as use): its grant, from which the Worker makes the URL (decision 182). */
  async expose(port: number, seconds: number): Promise<Outcome<PortGrant>> {
    const used = await this.use(null);
    if (!used.ok) return used;
    return new PortGrants(this.ctx.storage).grant(port, seconds);
  }

  async ports(): Promise<Outcome<PortGrant[]>> {
    const record = await this.#record();
    if (!record) return notFound();
    if (record.status !== "active") return gone(record);
    return ok(await new PortGrants(this.ctx.storage).list());
  }

  async unexpose(port: number): Promise<Outcome<PortGrant>> {
    const record = await this.#record();
    if (!record) return notFound();
    if (record.status !== "active") return gone(record);
    return new PortGrants(this.ctx.storage).revoke(port);
  }

  /** Lets a preview request in (it does not count as use), or a 410 saying why not. */
  async admit(port: number, nonce: number): Promise<Outcome<{ host: string }>> {
    const record = await this.#record();
    if (!record) return notFound();
    if (record.status !== "active") return gone(record);
    if (this.#ending !== null) {
      return refusal("gone", `sandbox ${record.id} is ending: ${this.#ending}`);
    }
    const why = await new PortGrants(this.ctx.storage).refusal(port, nonce);
    if (why !== null) return refusal("gone", `${why} (port ${port} of sandbox ${record.id})`);
    return ok({ host: hostOf(record) });
  }

  override alarm(): Promise<void> {
    return this.#oneAtATime(() => this.#alarm());
  }

  async #alarm(): Promise<void> {
    const record = await this.#record();
    if (!record) return;
    const now = Date.now();
    if (record.status !== "active") {
      if (now >= (record.endedAt ?? 0) + record.retentionMs) {
        await this.#directory.run(() => this.#directoryStub().forget(record.id));
        await this.ctx.storage.deleteAll();
      } else await this.ctx.storage.setAlarm((record.endedAt ?? 0) + record.retentionMs);
      return;
    }
    if (now < record.lastUsedAt + record.idleTimeoutMs) {
      await this.ctx.storage.setAlarm(record.lastUsedAt + record.idleTimeoutMs);
      return;
    }
    const onHost = await hostCall<HostSandboxInfo>(
      this.env,
      hostOf(record),
      "GET",
      `/v1/sandboxes/${record.id}`,
    );
    if (onHost.ok && onHost.value.runningExecs > 0) {
      // A command still running is use: the sandbox idles from when it ends.
      record.lastUsedAt = now;
      await this.#save(record);
      return;
    }
    if (!onHost.ok && onHost.error.code !== "not_found") {
      await this.ctx.storage.setAlarm(now + HOST_RETRY_MS);
      return;
    }
    const seconds = Math.round(record.idleTimeoutMs / 1000);
    await this.#end(record, "expired", `it was idle for its timeout of ${seconds} s`);
  }

  /**
   * Cancels its calls (settled ones answer as they are), then removes it from its host;
   * a container sandbox's container is stopped, which takes its disk with it.
   */
  async #end(record: SandboxRecord, status: SandboxStatus, reason: string): Promise<Outcome<null>> {
    this.#ending = reason;
    this.#justMade = null;
    const calls = await this.ctx.storage.list({ prefix: "call:" });
    await Promise.all(
      [...calls.keys()].map((key) =>
        invocation(this.env, key.slice("call:".length))
          .cancel()
          .catch(() => null),
      ),
    );
    if (record.backend === "container") {
      await containerOf(this.env, record.id).shutdown();
    } else if (status !== "lost") {
      const removed = await hostCall(
        this.env,
        hostOf(record),
        "DELETE",
        `/v1/sandboxes/${record.id}`,
      );
      if (!removed.ok && removed.error.code !== "not_found") {
        this.#ending = null;
        return removed;
      }
    }
    record.status = status;
    record.endedAt = Date.now();
    record.endReason = reason;
    await this.#save(record);
    return ok(null);
  }

  async #record(): Promise<SandboxRecord | undefined> {
    return this.ctx.storage.get<SandboxRecord>("record");
  }

  /**
   * Writes the record, its alarm and its line in the directory; with `later` the line is
   * written after the answer (still in order with every other line this object writes).
   */
  async #save(record: SandboxRecord, directory: "now" | "later" = "now"): Promise<void> {
    await this.ctx.storage.put("record", record);
    const active = record.status === "active";
    const due = active
      ? record.lastUsedAt + record.idleTimeoutMs
      : (record.endedAt ?? Date.now()) + record.retentionMs;
    // A use only moves the idle deadline later. An alarm already set sooner stays: when it
    // comes it finds the later use and sets itself again (#alarm). A call's use then
    // writes no alarm, which is a storage commit of its own (decision 278).
    const set = active ? await this.ctx.storage.getAlarm() : null;
    if (set === null || set > due) await this.ctx.storage.setAlarm(due);
    const written = this.#tellDirectory(viewOf(record));
    if (directory === "now") await written;
  }

  /** Puts `view` in the directory after every earlier line from this object. */
  #tellDirectory(view: SandboxView): Promise<void> {
    return this.#directory.run(() => this.#directoryStub().put(view));
  }

  #directoryStub() {
    return this.env.SANDBOX_DIRECTORY.getByName("all");
  }
}

/** The invocation DO as its protocol contract (the generated stub type nests too deep to check). */
function invocation(env: Env, id: string): InvocationApi {
  return env.INVOCATIONS.getByName(id) as unknown as InvocationApi;
}

/** What `hostCall` is given for a record: its host's name, or a container sandbox's own id. */
function hostOf(record: SandboxRecord): string {
  return record.backend === "container" ? record.id : record.placement;
}

/** Equal texts, compared in a time that depends only on their length. */
function sameText(a: string, b: string): boolean {
  const utf8 = new TextEncoder();
  return bytesEqual(utf8.encode(a), utf8.encode(b));
}

function viewOf(r: SandboxRecord): SandboxView {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    id: r.id,
    name: r.name,
    status: r.status,
    backend: r.backend ?? "host",
    placement: r.placement,
    limits: r.limits,
    network: r.network ?? { allow: [] },
    idleTimeoutSeconds: Math.round(r.idleTimeoutMs / 1000),
    createdAt: iso(r.createdAt),
    lastUsedAt: iso(r.lastUsedAt),
    expiresAt: r.status === "active" ? iso(r.lastUsedAt + r.idleTimeoutMs) : null,
    endedAt: r.endedAt === null ? null : iso(r.endedAt),
    endReason: r.endReason,
    ...(r.backend === "container" ? { fromPool: r.fromPool === true } : {}),
  };
}

function notFound<T>(): Outcome<T> {
  return refusal(
    "not_found",
    "no such sandbox (never created, or ended long enough ago to be forgotten); create one with POST /v1/sandboxes",
  );
}

function gone<T>(r: SandboxRecord): Outcome<T> {
  return refusal(
    "gone",
    `sandbox ${r.id} is ${r.status}: ${r.endReason} (at ${new Date(r.endedAt ?? 0).toISOString()}); create a new one with POST /v1/sandboxes`,
  );
}
