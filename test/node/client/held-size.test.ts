import { describe, expect, it } from "vitest";
import { fittingSize } from "../../../src/client/viewer/held-size.ts";

// The size a page holding the keyboard asks for (decision 193): what fits its window, in
// the bounds of a tty call's size (20 × 5 to 400 × 200).
describe("fittingSize", () => {
  const cell = { width: 8, height: 16 };

  it("fits whole cells into the window", () => {
    expect(fittingSize(967, 500, cell)).toEqual({ cols: 120, rows: 31 });
  });

  it("asks for 20 × 5 at, and no less under, the smallest size", () => {
    expect(fittingSize(160, 80, cell)).toEqual({ cols: 20, rows: 5 });
    expect(fittingSize(159, 79, cell)).toEqual({ cols: 20, rows: 5 });
    expect(fittingSize(168, 96, cell)).toEqual({ cols: 21, rows: 6 });
  });

  it("asks for 400 × 200 at, and no more over, the largest size", () => {
    expect(fittingSize(3200, 3200, cell)).toEqual({ cols: 400, rows: 200 });
    expect(fittingSize(3208, 3216, cell)).toEqual({ cols: 400, rows: 200 });
    expect(fittingSize(3192, 3184, cell)).toEqual({ cols: 399, rows: 199 });
  });

  it("asks for nothing while the terminal has not been drawn (no cell size)", () => {
    expect(fittingSize(1000, 800, { width: 0, height: 0 })).toBeNull();
  });
});
