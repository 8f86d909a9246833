import type { JsonValue } from "../../core/chord/types.ts";
import { formatCount } from "../../core/output/footer.ts";
import { el } from "./dom.ts";

/** Depth below which branches start open. */
const OPEN_DEPTH = 2;

/**
 * `details` as a collapsible tree (`<details>` per object or array). Re-renders only
 * when the value changed, and remembers which branches the reader opened or closed.
 */
export class DetailsTree {
  #json: string | null = null;
  readonly #toggled = new Map<string, boolean>();

  readonly #root: HTMLElement;

  constructor(root: HTMLElement) {
    this.#root = root;
  }

  render(value: JsonValue): void {
    const json = JSON.stringify(value);
    if (json === this.#json) return;
    this.#json = json;
    const empty =
      value === null || (typeof value === "object" && Object.keys(value as object).length === 0);
    this.#root.replaceChildren(
      empty ? el("p", "muted", "No details.") : this.#node(value, null, [], 0),
    );
  }

  #node(value: JsonValue, key: string | null, path: string[], depth: number): HTMLElement {
    if (value === null || typeof value !== "object") {
      const row = el("div", "leaf");
      if (key !== null) row.append(el("span", "key", key), ": ");
      row.append(el("span", `value ${value === null ? "null" : typeof value}`, show(value)));
      return row;
    }
    const entries: [string, JsonValue][] = Array.isArray(value)
      ? value.map((v, i) => [String(i), v])
      : Object.entries(value);
    const branch = el("details", "branch");
    const id = JSON.stringify(path);
    branch.open = this.#toggled.get(id) ?? depth < OPEN_DEPTH;
    branch.addEventListener("toggle", () => this.#toggled.set(id, branch.open));
    const summary = el("summary");
    if (key !== null) summary.append(el("span", "key", key), " ");
    const count = Array.isArray(value)
      ? `[${formatCount(entries.length)} ${entries.length === 1 ? "item" : "items"}]`
      : `{${formatCount(entries.length)} ${entries.length === 1 ? "key" : "keys"}}`;
    summary.append(el("span", "muted", count));
    const children = el("div", "children");
    for (const [k, v] of entries) children.append(this.#node(v, k, [...path, k], depth + 1));
    branch.append(summary, children);
    return branch;
  }
}

function show(value: string | number | boolean | null): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
