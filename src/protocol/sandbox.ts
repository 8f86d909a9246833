/**
 * Created sandboxes on the wire: what `POST /v1/sandboxes` takes and what every
 * sandbox route answers, and the Sandbox DO's RPC contract (docs/sandboxes.md).
 */
import type { NetworkPolicy } from "./network-policy.ts";
import type { Outcome } from "./outcome.ts";
import type { ExecLoad } from "./sandbox-wire.ts";

/**
 * A created sandbox's id: `sbx_<host>_<20 hex>`, the host it was placed on named inside
 * so that routing needs no lookup (docs/decisions/140).
 */
export const CREATED_SANDBOX_ID = /^sbx_([a-z0-9-]{1,32})_[0-9a-f]{20}$/;

/**
 * A new, random sandbox id on `placement` (the shape of `CREATED_SANDBOX_ID`).
 * @example newSandboxId("container") // "sbx_container_3f9c…" (20 hex)
 */
export function newSandboxId(placement: string): string {
  const hex = [...crypto.getRandomValues(new Uint8Array(10))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  return `sbx_${placement}_${hex}`;
}

/**
 * Where a sandbox's commands run: `host`, a sandbox host the operator runs (many
 * sandboxes each); `container`, a Cloudflare Containers instance of its own (decision 144).
 */
export type SandboxBackend = "host" | "container";

/**
 * The sandbox a call, an MCP session or the CLI names to get one of its own, made for
 * it: a call's run owns it (decision 221), an MCP session owns it (decision 222).
 */
export const NEW_SANDBOX = "new";

/** `active` until it is deleted, idles past its timeout (`expired`) or its host loses it (`lost`). */
export type SandboxStatus = "active" | "deleted" | "expired" | "lost";

/** What one sandbox may use (docs/sandboxes.md, "Limits"). */
export interface SandboxLimits {
  /** Size of the sandbox's file system: workspace, spills and uploads together. */
  diskBytes: number;
  /** Commands running at once; one more is a 429. */
  maxExecs: number;
  /** Processes and threads of all its commands together. */
  maxProcesses: number;
  /** Address space of each process (RLIMIT_AS). */
  maxMemoryBytes: number;
  /** Largest file one command may write (RLIMIT_FSIZE). */
  maxFileBytes: number;
  /** Bytes up and down its commands may move through its egress proxy in all (decision 181). */
  egressBytes: number;
}

/** `GET /v1/sandboxes/:id` */
export interface SandboxView {
  id: string;
  name: string | null;
  status: SandboxStatus;
  backend: SandboxBackend;
  /** The sandbox host it lives on (a name of `SANDBOXES`), or `container`. */
  placement: string;
  limits: SandboxLimits;
  /** What its commands may reach (decision 181); `{ allow: [] }`: nothing. */
  network: NetworkPolicy;
  idleTimeoutSeconds: number;
  createdAt: string;
  lastUsedAt: string;
  /** When the idle alarm ends it unless it is used or kept alive first; null once ended. */
  expiresAt: string | null;
  endedAt: string | null;
  /** Why it ended, in a sentence. */
  endReason: string | null;
  /**
   * A container sandbox's only: whether its container came from the warm pool, started
   * before it was asked for (decision 230), rather than started by its create.
   */
  fromPool?: boolean;
}

/** What the Worker hands the Sandbox DO to create one. */
export interface SandboxCreate {
  id: string;
  name: string | null;
  placement: string;
  idleTimeoutSeconds: number;
  limits: Partial<SandboxLimits>;
  network: NetworkPolicy;
  /** Days an ended sandbox's record answers 410 before it is forgotten (then 404). */
  retentionDays: number;
  /** The nonce its first sandbox token is signed over (decision 250). */
  tokenNonce: string;
  /**
   * A container sandbox whose id the warm pool gave: its container is already started
   * and assigned to it for good (decision 230), so the create does not boot one.
   */
  fromPool?: boolean;
}

/** The container DO's RPC methods (one container per `container` sandbox, decision 144). */
export interface SandboxContainerApi {
  /**
   * Starts the container and waits until its sandbox host answers; a refusal says why not.
   * `internet`: whether the container may reach outside at all (decision 183), decided
   * once, at start: a container sandbox created without a network never gets one.
   */
  boot(sandboxId: string, options: { internet: boolean }): Promise<Outcome<null>>;
  /**
   * Starts the container for the warm pool (decision 230): like `boot` without internet,
   * but assigned to no sandbox yet, so it answers no request until `claim`.
   */
  warm(sandboxId: string): Promise<Outcome<null>>;
  /**
   * Assigns a warmed container to its sandbox for good: refused when it was never warmed,
   * was already claimed, or is no longer running (a refused one is shut down).
   */
  claim(sandboxId: string): Promise<Outcome<null>>;
  /** Stops the container (SIGKILL) and forgets it; safe to call when it is not running. */
  shutdown(): Promise<void>;
  fetch(request: Request): Promise<Response>;
}

/** What the warm pool of containers has now (`GET /v1/sandboxes/pool`, decision 230). */
export interface ContainerPoolView {
  /** `CONTAINER_POOL_SIZE`: how many started, unassigned containers it keeps. */
  size: number;
  /** Started and waiting for a sandbox. */
  ready: number;
  /** Being started to refill it. */
  starting: number;
}

/** The name of the one warm pool object. */
export const CONTAINER_POOL_NAME = "all";

/** The warm pool DO's RPC methods (one object, `CONTAINER_POOL_NAME`; decision 230). */
export interface ContainerPoolApi {
  /**
   * A started container assigned for good to the sandbox id it was started under, which
   * the new sandbox takes as its own; null when none is ready (the create starts one
   * cold). Every take starts a refill.
   */
  take(): Promise<string | null>;
  /** Starts a refill if the pool holds fewer than its size (a Worker's first request). */
  fill(): Promise<void>;
  /** Forgets a pooled container that stopped before it was taken, and refills. */
  drop(sandboxId: string): Promise<void>;
  view(): Promise<ContainerPoolView>;
}

/** The Sandbox DO's RPC methods. */
export interface SandboxApi {
  create(input: SandboxCreate): Promise<Outcome<SandboxView>>;
  view(): Promise<Outcome<SandboxView>>;
  /** Checks it is active and on its host, counts a use, and remembers the call (ended with it). */
  use(toolCallId: string | null): Promise<Outcome<SandboxView>>;
  /** `use` for a call that runs a command: how busy its commands are, as its host just said (null: not said). */
  useForCall(toolCallId: string): Promise<Outcome<ExecLoad | null>>;
  /** Replaces its network policy on its host, then in its record. */
  setNetwork(policy: NetworkPolicy): Promise<Outcome<SandboxView>>;
  /** Cancels its running calls, then removes it from its host. */
  remove(): Promise<Outcome<SandboxView>>;
  /**
   * Whether a sandbox token signed over `nonce` is still good: the sandbox is active and
   * `nonce` is its current one (decision 250). `not_found`, `gone` or `unauthorized`.
   */
  checkToken(nonce: string): Promise<Outcome<null>>;
  /** Makes `nonce` its current one: every token signed over the one before is dead. */
  rotateToken(nonce: string): Promise<Outcome<SandboxView>>;
}

/** The sandbox directory DO's RPC methods: the list behind `GET /v1/sandboxes`. */
export interface SandboxDirectoryApi {
  put(view: SandboxView): Promise<void>;
  forget(id: string): Promise<void>;
  list(): Promise<SandboxView[]>;
}
