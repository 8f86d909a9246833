// What `exports` from "cloudflare:workers" holds in the tests: the Worker's entry and its
// Durable Object classes. Only tests reach the entry through it, so only tests declare it
// (worker-env.d.ts, which every Worker file reads, names nothing above the protocol).
declare namespace Cloudflare {
  interface GlobalProps {
    mainModule: typeof import("../../worker-entry.ts");
    durableNamespaces:
      | "InvocationDO"
      | "RunDO"
      | "McpSessionDO"
      | "SandboxDO"
      | "SandboxDirectoryDO";
  }
}
