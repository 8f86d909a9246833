/**
 * The `toolwire` command (bin/toolwire runs this file with Node 22).
 * Usage: `toolwire run bash --command "npm test"`; see `toolwire --help`.
 */
import { createRequire } from "node:module";
import type { Keyboard } from "./cli-process.ts";
import { runCli } from "./commands.ts";

// By the package's own name, so it is found from src/ and from an installed dist/package/.
const { version } = createRequire(import.meta.url)("toolwire/package.json") as { version: string };

// A reader that went away (`toolwire … | head`) ends the command quietly.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

/** The person's terminal, when stdin and stdout both are one. */
const keyboard: Keyboard | undefined =
  process.stdin.isTTY && process.stdout.isTTY
    ? {
        size: () => ({ cols: process.stdout.columns, rows: process.stdout.rows }),
        raw(onData) {
          process.stdin.setRawMode(true);
          process.stdin.on("data", onData);
          process.stdin.resume();
          return () => {
            process.stdin.off("data", onData);
            process.stdin.setRawMode(false);
            process.stdin.pause();
          };
        },
        onResize(handler) {
          process.stdout.on("resize", handler);
          return () => process.stdout.off("resize", handler);
        },
      }
    : undefined;

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  version,
  ...(keyboard ? { keyboard } : {}),
  onInterrupt(handler) {
    process.on("SIGINT", handler);
    return () => process.off("SIGINT", handler);
  },
});
// Exit once everything written has reached the terminal or pipe.
process.stdout.write("", () => process.exit(code));
