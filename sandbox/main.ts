// The sandbox host: `node sandbox/main.ts` (see README for the environment it reads).
// It refuses to start without a working jail unless SANDBOX_ISOLATION=none.

import { configFromEnv } from "./config.ts";

// No single request ends the host (decision 247): routes answer their own errors, and an
// error that escapes one (a stream's, a timer's) is logged, not fatal to every sandbox.
process.on("uncaughtException", (err) => {
  console.error("sandbox host: an error no request caught (the host keeps running):", err);
});
process.on("unhandledRejection", (err) => {
  console.error("sandbox host: a rejection no request caught (the host keeps running):", err);
});

import { startSandboxHost } from "./server.ts";

let host: Awaited<ReturnType<typeof startSandboxHost>>;
try {
  host = await startSandboxHost(configFromEnv(process.env));
} catch (err) {
  console.error(`sandbox host not started: ${(err as Error).message}`);
  process.exit(1);
}
for (const warning of host.warnings) console.warn(`WARNING: ${warning}`);
console.log(`sandbox host listening on ${host.url} (workspace ${host.root})`);
const stop = () => {
  void host.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
