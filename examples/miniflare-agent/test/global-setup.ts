import { type StartedSandboxHost, startSandboxHost } from "toolwire/testing";

/** A real sandbox host for the agent's tests, on the port vitest.config.ts chose. */
export default async function setup(): Promise<() => Promise<void>> {
  const host: StartedSandboxHost = await startSandboxHost({
    port: Number(process.env.SANDBOX_HOST_PORT),
    token: process.env.SANDBOX_HOST_TOKEN,
  });
  for (const warning of host.warnings) console.warn(`sandbox host: ${warning}`);
  return () => host.stop();
}
