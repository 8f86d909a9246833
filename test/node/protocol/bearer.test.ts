import { describe, expect, it } from "vitest";
import { bearerToken, bytesEqual, secretMatches } from "../../../src/protocol/index.ts";

describe("bearerToken", () => {
  it("takes the token of a Bearer header, whatever the scheme's case", () => {
    expect(bearerToken("Bearer s3cret")).toBe("s3cret");
    expect(bearerToken("bearer   s3cret ")).toBe("s3cret");
  });

  it("refuses every other form", () => {
    for (const header of [
      "",
      "Bearer",
      "Bearer ",
      "Basic abc",
      "Bearer a b",
      "Bearers x",
      "s3cret",
    ]) {
      expect(bearerToken(header), header).toBeNull();
    }
  });
});

describe("secretMatches", () => {
  it("is true only for the same secret", async () => {
    expect(await secretMatches("s3cret", "s3cret")).toBe(true);
    expect(await secretMatches("s3cre", "s3cret")).toBe(false);
    expect(await secretMatches("s3cret!", "s3cret")).toBe(false);
    expect(await secretMatches("S3cret", "s3cret")).toBe(false);
    expect(await secretMatches("", "s3cret")).toBe(false);
  });
});

describe("bytesEqual", () => {
  it("compares every byte and refuses other lengths", () => {
    const a = Uint8Array.from([1, 2, 3]);
    expect(bytesEqual(a, Uint8Array.from([1, 2, 3]))).toBe(true);
    expect(bytesEqual(a, Uint8Array.from([1, 2, 4]))).toBe(false);
    expect(bytesEqual(a, Uint8Array.from([0, 2, 3]))).toBe(false);
    expect(bytesEqual(a, Uint8Array.from([1, 2]))).toBe(false);
    expect(bytesEqual(new Uint8Array(), new Uint8Array())).toBe(true);
  });
});
