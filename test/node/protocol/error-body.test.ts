import { describe, expect, it } from "vitest";
import { errorBodyMessage } from "../../../src/protocol/index.ts";

describe("errorBodyMessage (the spill reader and the Worker's spill route)", () => {
  it("reads the message of an error body in the API's shape", () => {
    const body = JSON.stringify({ error: { code: "not_found", message: "no such call" } });
    expect(errorBodyMessage(body)).toBe("no such call");
  });

  it("is null for anything else, so the caller says what it got", () => {
    for (const body of [
      "",
      "<html>502</html>",
      "null",
      "[]",
      '{"error":"gone"}',
      '{"error":{"message":7}}',
    ]) {
      expect(errorBodyMessage(body)).toBeNull();
    }
  });
});
