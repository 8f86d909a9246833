/**
 * A call's output over time, for a page header: the byte totals it has seen, sampled
 * once a second, drawn as a small bar chart of bytes per second (the last 40 s), and
 * the rate now. A person reads whether a command is still printing, bursting or stuck
 * from the picture faster than from the numbers.
 */
import { formatBytes } from "../truncation-notice.ts";

const SVG = "http://www.w3.org/2000/svg";
/** Seconds the chart shows, one bar each. */
const SPAN = 40;
const WIDTH = 120;
const HEIGHT = 24;

export class RateChart {
  readonly #svg: SVGSVGElement;
  /** Bytes printed in each whole second so far, oldest first (at most SPAN). */
  readonly #perSecond: number[] = [];
  #second: number | null = null;
  #bytesAtSecond = 0;
  #lastBytes = 0;

  constructor(host: HTMLElement) {
    this.#svg = document.createElementNS(SVG, "svg");
    this.#svg.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
    this.#svg.setAttribute("width", String(WIDTH));
    this.#svg.setAttribute("height", String(HEIGHT));
    this.#svg.setAttribute("role", "img");
    this.#svg.setAttribute("aria-label", `Output per second, the last ${SPAN} s`);
    host.replaceChildren(this.#svg);
  }

  /** The call's byte total at `now` (ms); a new second closes the one before. */
  observe(totalBytes: number, now: number): void {
    const second = Math.floor(now / 1000);
    if (this.#second === null) {
      // What came before the page opened is not one second's output.
      this.#second = second;
      this.#bytesAtSecond = totalBytes;
    }
    while (this.#second < second) {
      this.#perSecond.push(Math.max(0, this.#lastBytes - this.#bytesAtSecond));
      if (this.#perSecond.length > SPAN) this.#perSecond.shift();
      this.#bytesAtSecond = this.#lastBytes;
      this.#second++;
    }
    this.#lastBytes = totalBytes;
  }

  /** Bytes per second over the last whole second, or `null` before one has passed. */
  get rate(): number | null {
    return this.#perSecond.length > 0 ? (this.#perSecond.at(-1) ?? 0) : null;
  }

  /** "12 KB/s" for the last second. */
  describeRate(): string {
    const rate = this.rate;
    return rate === null ? "" : `${formatBytes(rate)}/s`;
  }

  /** Redraws the bars, each scaled to the busiest second shown. */
  draw(): void {
    const peak = Math.max(1, ...this.#perSecond);
    const bar = WIDTH / SPAN;
    // Bars fill from the left until the chart is full, then scroll.
    const bars = this.#perSecond.map((bytes, i) => {
      const rect = document.createElementNS(SVG, "rect");
      const h = bytes === 0 ? 0 : Math.max(1, (bytes / peak) * HEIGHT);
      rect.setAttribute("x", String(i * bar));
      rect.setAttribute("y", String(HEIGHT - h));
      rect.setAttribute("width", String(Math.max(1, bar - 0.4)));
      rect.setAttribute("height", String(h));
      return rect;
    });
    const base = document.createElementNS(SVG, "line");
    base.setAttribute("x1", "0");
    base.setAttribute("x2", String(WIDTH));
    base.setAttribute("y1", String(HEIGHT - 0.5));
    base.setAttribute("y2", String(HEIGHT - 0.5));
    this.#svg.replaceChildren(base, ...bars);
    this.#svg.dataset.seconds = String(this.#perSecond.length);
    this.#svg.dataset.peak = String(peak);
  }
}
