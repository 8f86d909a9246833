/**
 * Making one created sandbox: its id (`sbx_<placement>_<20 hex>`, decision 140), the
 * check that its placement is configured, and its record in a Sandbox DO, which starts
 * it on its host or in its container. `POST /v1/sandboxes`, a run's own sandbox and an
 * MCP session's own sandbox all make theirs here (decision 220).
 */
import { CONTAINER_PLACEMENT, checkSandboxName } from "../execenv/index.ts";
import {
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

/** A sandbox just made: its view, and the nonce its token is minted from (decision 250). */
interface MadeSandbox {
  view: SandboxView;
  tokenNonce: string;
}

/**
 * Makes a sandbox and answers its view; a refusal (unknown host, full host, no
 * container backend) is thrown as the API error it is.
 * @example const { view } = await makeSandbox(env, { name: `run ${runId}` });
 */
export async function makeSandbox(env: Env, request: NewSandbox = {}): Promise<MadeSandbox> {
  const placement =
    request.backend === "container" ? CONTAINER_PLACEMENT : (request.host ?? "default");
  const hex = [...crypto.getRandomValues(new Uint8Array(10))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  const id = `sbx_${placement}_${hex}`;
  // A host name must be in SANDBOXES; a container id needs the container binding.
  unwrap(checkSandboxName(env, placement === CONTAINER_PLACEMENT ? id : placement));
  const config = workerConfig(env);
  const tokenNonce = newTokenNonce();
  // Minted first: without SUBSCRIBE_SECRET nothing is created (503).
  await sandboxTokenFor(env, id, tokenNonce);
  const view = unwrap(
    await sandboxStub(env, id).create({
      id,
      name: request.name ?? null,
      placement,
      idleTimeoutSeconds: request.idleTimeoutSeconds ?? config.sandboxIdleTimeoutMs / 1000,
      limits: request.limits ?? {},
      network: request.network ?? { allow: [] },
      retentionDays: config.settledRetentionMs / 86_400_000,
      tokenNonce,
    }),
  );
  return { view, tokenNonce };
}
