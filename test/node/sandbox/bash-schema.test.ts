import { describe, expect, it } from "vitest";
import { bashParams } from "../../../src/tools/bash.ts";

describe("bash tool schema", () => {
  it("tells the model the command runs with bash, not sh", () => {
    const description = bashParams.shape.command.description ?? "";
    expect(description).toMatch(/\bbash -c\b/);
    expect(description).not.toMatch(/\/bin\/sh/);
  });
});
