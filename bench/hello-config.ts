/**
 * The wrangler config of the subscribers bench's floor (decision 235): the project's own
 * wrangler.toml, with `main` swapped for bench/hello-ws/worker.ts (the real Worker plus a
 * hello Durable Object) and that object's binding and migration added. Made from
 * wrangler.toml at each run, so the bench serves exactly what is deployed, plus the
 * floor; it is written to a temporary folder and never deployed.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const HELLO_TABLES = `
[[durable_objects.bindings]]
name = "HELLO"
class_name = "HelloDO"

[[migrations]]
tag = "bench-hello"
new_sqlite_classes = ["HelloDO"]
`;

/**
 * Writes the bench config for the checkout at `root` and answers its path.
 * @example startWranglerDev({ config: helloConfig(ROOT), … })
 */
export function helloConfig(root: string): string {
  const project = readFileSync(path.join(root, "wrangler.toml"), "utf8");
  const swap = (text: string, pattern: RegExp, value: string) => {
    if (!pattern.test(text)) throw new Error(`wrangler.toml has no ${pattern}`);
    return text.replace(pattern, value);
  };
  const main = swap(
    project,
    /^main = .*$/m,
    `main = ${JSON.stringify(path.join(root, "bench/hello-ws/worker.ts"))}`,
  );
  const assets = swap(
    main,
    /^directory = "\.\/public"$/m,
    `directory = ${JSON.stringify(path.join(root, "public"))}`,
  );
  const file = path.join(
    mkdtempSync(path.join(tmpdir(), "toolwire-bench-hello-")),
    "wrangler.toml",
  );
  writeFileSync(file, assets + HELLO_TABLES);
  return file;
}
