// The sandbox host: `node sandbox/main.ts` (see README for the environment it reads).

import { configFromEnv } from "./config.ts";
import { startSandboxHost } from "./server.ts";

const host = await startSandboxHost(configFromEnv(process.env));
console.log(`sandbox host listening on ${host.url} (workspace ${host.root})`);
const stop = () => {
  void host.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
