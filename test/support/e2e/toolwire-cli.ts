// The real `toolwire` CLI (bin/toolwire) run against the e2e stack, for the tests that
// check what a person at a terminal gets: its exit code and both streams.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { inject } from "vitest";

export const TOOLWIRE_BIN = path.resolve(import.meta.dirname, "../../../bin/toolwire");

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `toolwire <args>` with the e2e stack's URL and token (`env` adds or overrides);
 * `onStdout` (and `onStderr`) see that stream so far each time more arrives.
 */
export function toolwire(
  args: string[],
  env: Record<string, string> = {},
  onStdout?: (text: string, child: ChildProcess) => void,
  onStderr?: (text: string) => void,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(TOOLWIRE_BIN, args, {
      env: {
        PATH: process.env.PATH ?? "",
        TOOLWIRE_URL: inject("apiUrl"),
        TOOLWIRE_TOKEN: inject("apiToken"),
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
      onStdout?.(stdout, child);
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
      onStderr?.(stderr);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
