/**
 * Making one created sandbox: its id (`sbx_<placement>_<20 hex>`, decision 140), the
 * check that its placement is configured, and its record in a Sandbox DO, which starts
 * it on its host or in its container. `POST /v1/sandboxes`, a run's own sandbox and an
 * MCP session's own sandbox all make theirs here (decision 220).
 */
import { CONTAINER_PLACEMENT, checkSandboxName } from "../execenv/index.ts";
import {
  type SandboxApi,
  type SandboxLimits,
  type SandboxView,
  workerConfig,
} from "../protocol/index.ts";
import type { NetworkPolicy } from "../protocol/network-policy.ts";
import { unwrap } from "./invocation-stub.ts";

/** What a new sandbox may ask for; everything left out takes the Worker's default. */
export interface NewSandbox {
  name?: string | null;
  backend?: "host" | "container";
  host?: string;
  idleTimeoutSeconds?: number;
  limits?: Partial<SandboxLimits>;
  network?: NetworkPolicy;
}

/**
 * Makes a sandbox and answers its view; a refusal (unknown host, full host, no
 * container backend) is thrown as the API error it is.
 * @example const { id } = await makeSandbox(env, { name: `run ${runId}` });
 */
export async function makeSandbox(env: Env, request: NewSandbox = {}): Promise<SandboxView> {
  const placement =
    request.backend === "container" ? CONTAINER_PLACEMENT : (request.host ?? "default");
  const hex = [...crypto.getRandomValues(new Uint8Array(10))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  const id = `sbx_${placement}_${hex}`;
  // A host name must be in SANDBOXES; a container id needs the container binding.
  unwrap(checkSandboxName(env, placement === CONTAINER_PLACEMENT ? id : placement));
  const config = workerConfig(env);
  return unwrap(
    await (env.SANDBOX_RECORDS.getByName(id) as unknown as SandboxApi).create({
      id,
      name: request.name ?? null,
      placement,
      idleTimeoutSeconds: request.idleTimeoutSeconds ?? config.sandboxIdleTimeoutMs / 1000,
      limits: request.limits ?? {},
      network: request.network ?? { allow: [] },
      retentionDays: config.settledRetentionMs / 86_400_000,
    }),
  );
}
