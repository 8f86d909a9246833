/**
 * The size of a terminal taken over from a page (decision 193): the page that holds the
 * keyboard (an attach token) gives the call's terminal the size of its own window, follows
 * the window as it changes, and gives the call its own size back when the person lets go:
 * the "Let go" button, the page closed or left, or its token about to expire.
 */
import { type TerminalSize, TTY_MAX_SIZE, TTY_MIN_SIZE } from "../../protocol/index.ts";

/** A resize waits this long for the window to stop changing. */
const SETTLE_MS = 250;
/** The size goes back this long before the token that set it expires. */
const BEFORE_EXPIRY_MS = 30_000;
/** Room kept below the terminal on the page for its notes. */
const BELOW_PX = 120;
/** Room kept beside it for the pane's padding and the terminal's frame. */
const BESIDE_PX = 40;

const clamp = (n: number, min: number, max: number) => Math.max(min, Math.min(max, n));

/**
 * The cols × rows that fit `width` × `height` pixels, for cells of `cell` pixels, within the
 * bounds of a tty call's size; null while the terminal is not drawn (no cell size).
 * @example fittingSize(960, 540, { width: 8, height: 17 }) // { cols: 120, rows: 31 }
 */
export function fittingSize(
  width: number,
  height: number,
  cell: { width: number; height: number },
): TerminalSize | null {
  if (!(cell.width > 0 && cell.height > 0)) return null;
  return {
    cols: clamp(Math.floor(width / cell.width), TTY_MIN_SIZE.cols, TTY_MAX_SIZE.cols),
    rows: clamp(Math.floor(height / cell.height), TTY_MIN_SIZE.rows, TTY_MAX_SIZE.rows),
  };
}

/** What the holder needs of its page: where the terminal is drawn, and the resize route. */
export interface SizeHolderParts {
  /** The element the terminal may fill (its width; the window gives the height). */
  area: HTMLElement;
  /** One cell's size in pixels as the terminal draws it now. */
  cell(): { width: number; height: number };
  /** Resizes the call's terminal (or gives its own size back); answers the token's expiry. */
  resize(size: TerminalSize | "restore"): Promise<{ expiresAt?: number }>;
  /** The same, from a page that is going away (a request that outlives the page). */
  restoreOnLeave(): void;
  /** Told each size the page asked for (the terminal draws at it at once). */
  onSize(size: TerminalSize): void;
  /** Told when a resize was refused, with why. */
  onRefused(error: unknown): void;
}

export class SizeHolder {
  readonly #p: SizeHolderParts;
  #asked: TerminalSize | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #expiry: ReturnType<typeof setTimeout> | undefined;
  #released = false;
  readonly #onWindow = () => {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.fit(), SETTLE_MS);
  };
  readonly #onLeave = () => {
    if (this.#released || this.#asked === null) return;
    this.#released = true;
    this.#p.restoreOnLeave();
  };

  constructor(parts: SizeHolderParts) {
    this.#p = parts;
    window.addEventListener("resize", this.#onWindow);
    window.addEventListener("pagehide", this.#onLeave);
  }

  /** Whether the person has let go (the page no longer resizes). */
  get released(): boolean {
    return this.#released;
  }

  /** Gives the terminal the size of the page's window, if it differs from the last one asked. */
  async fit(): Promise<void> {
    if (this.#released) return;
    const width = this.#p.area.clientWidth - BESIDE_PX;
    const height = window.innerHeight - BELOW_PX;
    const size = fittingSize(width, height, this.#p.cell());
    if (size === null) return;
    if (this.#asked?.cols === size.cols && this.#asked.rows === size.rows) return;
    this.#asked = size;
    this.#p.onSize(size);
    try {
      const answer = await this.#p.resize(size);
      if (answer.expiresAt !== undefined) this.#letGoBefore(answer.expiresAt);
    } catch (error) {
      this.#p.onRefused(error);
    }
  }

  /** Lets go: the call's own size comes back and the page stops following its window. */
  async letGo(): Promise<void> {
    if (this.#released) return;
    this.stop();
    if (this.#asked !== null) await this.#p.resize("restore");
  }

  /** Stops following the window, giving nothing back (the command ended). */
  stop(): void {
    this.#released = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#expiry);
    window.removeEventListener("resize", this.#onWindow);
    window.removeEventListener("pagehide", this.#onLeave);
  }

  #letGoBefore(expiresAt: number): void {
    clearTimeout(this.#expiry);
    const wait = Math.max(0, expiresAt - BEFORE_EXPIRY_MS - Date.now());
    this.#expiry = setTimeout(() => void this.letGo().catch(() => {}), wait);
  }
}
