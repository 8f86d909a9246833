/**
 * Making one created sandbox: its id (`sbx_<placement>_<20 hex>`, decision 140), the
 * check that its placement is configured, and its record in a Sandbox DO, which starts
 * it on its host or in its container. `POST /v1/sandboxes`, a run's own sandbox and an
 * MCP session's own sandbox all make theirs here (decision 220). A container sandbox
 * that names no network takes a started container from the warm pool when one is ready,
 * and with it that container's id (decision 230).
 */
import { CONTAINER_PLACEMENT, checkSandboxName } from "../execenv/index.ts";
import {
  CONTAINER_POOL_NAME,
  newSandboxId,
  newTokenNonce,
  type SandboxLimits,
  type SandboxView,
  workerConfig,
} from "../protocol/index.ts";
import type { NetworkPolicy } from "../protocol/network-policy.ts";
import { unwrap } from "./invocation-stub.ts";
import { sandboxStub } from "./sandbox-stub.ts";
import { sandboxTokenFor } from "./sandbox-token.ts";

/** What a new sandbox may ask for; everything left out takes the Worker's default. */
interface NewSandbox {
  name?: string | null;
  backend?: "host" | "container";
  host?: string;
  idleTimeoutSeconds?: number;
  limits?: Partial<SandboxLimits>;
  network?: NetworkPolicy;
}

/** A sandbox just made: its view and its token (decision 250). */
interface MadeSandbox {
  view: SandboxView;
  token: string;
}

/**
 * Makes a sandbox and answers its view; a refusal (unknown host, full host, no
 * container backend) is thrown as the API error it is.
 * @example const { view } = await makeSandbox(env, { name: `run ${runId}` });
 */
export async function makeSandbox(env: Env, request: NewSandbox = {}): Promise<MadeSandbox> {
  const placement =
    request.backend === "container" ? CONTAINER_PLACEMENT : (request.host ?? "default");
  const config = workerConfig(env);
  // A host name must be in SANDBOXES; a container id needs the container binding.
  const fresh = newSandboxId(placement);
  unwrap(checkSandboxName(env, placement === CONTAINER_PLACEMENT ? fresh : placement));
  const tokenNonce = newTokenNonce();
  // Minted first: without SUBSCRIBE_SECRET nothing is created (503).
  const token = await sandboxTokenFor(env, fresh, tokenNonce);
  const create = (id: string, fromPool: boolean) =>
    sandboxStub(env, id).create({
      id,
      name: request.name ?? null,
      placement,
      idleTimeoutSeconds: request.idleTimeoutSeconds ?? config.sandboxIdleTimeoutMs / 1000,
      limits: request.limits ?? {},
      network: request.network ?? { allow: [] },
      retentionDays: config.settledRetentionMs / 86_400_000,
      tokenNonce,
      ...(fromPool ? { fromPool } : {}),
    });
  const pooled =
    placement === CONTAINER_PLACEMENT && !request.network?.allow.length
      ? await takePooled(env)
      : null;
  let made = pooled ? await create(pooled, true) : null;
  // A pooled container that died after it was taken (its create finds it gone): the
  // create starts its own instead, as it would have with an empty pool (decision 230).
  if (!made || (!made.ok && CONTAINER_GONE.has(made.error.code))) made = await create(fresh, false);
  const view = unwrap(made);
  // A pooled container's sandbox takes that container's id, which the token must name.
  return {
    view,
    token: view.id === fresh ? token : await sandboxTokenFor(env, view.id, tokenNonce),
  };
}

/** How a create in a pooled container that died fails: the container is not there. */
const CONTAINER_GONE = new Set(["not_found", "sandbox_unreachable"]);

/**
 * The id of a pooled container, now assigned to the sandbox being made, or null when the
 * pool is off (`CONTAINER_POOL_SIZE` 0: not even asked) or has none ready.
 */
async function takePooled(env: Env): Promise<string | null> {
  if (!env.CONTAINER_POOL || workerConfig(env).containerPoolSize === 0) return null;
  return env.CONTAINER_POOL.getByName(CONTAINER_POOL_NAME).take();
}
