/**
 * The `toolwire` command (bin/toolwire runs this file with Node 22).
 * Usage: `toolwire run bash --command "npm test"`; see `toolwire --help`.
 */
import { createRequire } from "node:module";
import { runCli } from "./commands.ts";

// By the package's own name, so it is found from src/ and from an installed dist/package/.
const { version } = createRequire(import.meta.url)("toolwire/package.json") as { version: string };

// A reader that went away (`toolwire … | head`) ends the command quietly.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  version,
  onInterrupt(handler) {
    process.on("SIGINT", handler);
    return () => process.off("SIGINT", handler);
  },
});
// Exit once everything written has reached the terminal or pipe.
process.stdout.write("", () => process.exit(code));
