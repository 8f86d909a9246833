/**
 * Runs every `bench/*.bench.ts` in name order. Each exports a default async function that
 * measures and prints its own table. `node bench/run.ts chord` runs only names containing
 * "chord".
 */
import { readdirSync } from "node:fs";

const dir = new URL("./", import.meta.url);
const filters = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((name) => name.endsWith(".bench.ts"))
  .filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)))
  .sort();

if (files.length === 0) {
  console.error(`No bench/*.bench.ts matches ${filters.join(", ") || "(any)"}.`);
  process.exit(1);
}
console.log(`Node ${process.version}, ${process.platform}/${process.arch}`);
for (const name of files) {
  const mod: { default?: unknown } = await import(new URL(name, dir).href);
  if (typeof mod.default !== "function") {
    console.error(`${name}: has no default export function; skipped.`);
    process.exitCode = 1;
    continue;
  }
  console.log(`\n## ${name}\n`);
  await (mod.default as () => Promise<void>)();
}
