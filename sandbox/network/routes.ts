import { Hono } from "hono";
import { checkNetworkPolicy, type NetworkPolicy } from "../../src/protocol/network-policy.ts";
import { SandboxError } from "../errors.ts";
import type { HostedSandbox } from "../sandboxes/hosted-sandbox.ts";
import { noNetwork, type SandboxSet } from "../sandboxes/sandbox-set.ts";

/**
 * A policy from a request's `network` (absent: none, no network), or a 400 that names
 * the bad entry.
 * @example const policy = policyOf(body.network);
 */
export function policyOf(value: unknown): NetworkPolicy {
  if (value === undefined) return { allow: [] };
  const policy = checkNetworkPolicy(value);
  if (typeof policy === "string") throw new SandboxError("bad_request", policy);
  return policy;
}

function networkOf(sandbox: HostedSandbox) {
  if (!sandbox.network) throw noNetwork();
  return sandbox.network;
}

/**
 * `GET /v1/sandboxes/:id/network` (the policy, totals and the last 1,000 connections)
 * and `PUT /v1/sandboxes/:id/network` (replaces the policy; new connections follow it).
 * Mounted behind the host's bearer token.
 * @example app.route("/", networkRoutes(set));
 */
export function networkRoutes(set: SandboxSet): Hono {
  const app = new Hono();
  app.get("/v1/sandboxes/:id/network", (c) =>
    c.json(networkOf(set.find(c.req.param("id"))).view()),
  );
  app.put("/v1/sandboxes/:id/network", async (c) => {
    const id = c.req.param("id");
    const network = networkOf(set.find(id));
    const body = await c.req.json().catch(() => null);
    if (body === null)
      throw new SandboxError("bad_request", "send the policy as JSON: { allow: [...] }");
    network.setPolicy(policyOf(body));
    // Kept for a host that starts again (decision 246).
    await set.saveRecord(id);
    return c.json({ policy: network.policy });
  });
  return app;
}
