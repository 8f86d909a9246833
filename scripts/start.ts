// Placeholder until the sandbox host exists: runs the Worker with wrangler dev, offline.
import { spawn } from "node:child_process";

const env = {
  ...process.env,
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_SEND_METRICS: "false",
};
const child = spawn("wrangler", ["dev", "--ip", "127.0.0.1", "--port", "8787"], {
  stdio: "inherit",
  env,
});
child.on("exit", (code) => process.exit(code ?? 0));
