/**
 * The README's client example is the one test/e2e/package.test.ts installs and runs word
 * for word on Node 20 and 22 (docs/client.md § Example): the two copies must not drift.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** The first ```js block after `heading` in `file`. */
function jsBlockAfter(file: string, heading: string): string | undefined {
  const text = readFileSync(path.join(ROOT, file), "utf8");
  const at = text.indexOf(heading);
  if (at < 0) return undefined;
  return /```js\n([\s\S]*?)```/.exec(text.slice(at))?.[1];
}

describe("the README's client example", () => {
  it("is docs/client.md's tested example, byte for byte", () => {
    const tested = jsBlockAfter("docs/client.md", "## Example");
    expect(tested).toContain('from "toolwire/client"');
    expect(jsBlockAfter("README.md", "### Client library")).toBe(tested);
  });
});
