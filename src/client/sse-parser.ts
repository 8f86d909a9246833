/** One dispatched Server-Sent Event. */
export interface SseMessage {
  event: string;
  data: string;
  id?: string;
}

/**
 * Incremental `text/event-stream` parser (the WHATWG rules: `data:` lines joined
 * with "\n", a blank line dispatches, `:` starts a comment, CR, LF and CRLF all end
 * a line). Feed decoded text in chunks of any size.
 *
 * @example
 * const p = new SseParser();
 * p.push("id: 3\ndata: {\"type\":\"tool_end\"}\n\n"); // [{ event: "message", id: "3", data: ... }]
 */
export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private event = "";
  private id: string | undefined;
  private pendingCr = false;

  push(chunk: string): SseMessage[] {
    const out: SseMessage[] = [];
    let text = chunk;
    // A CR ending the previous chunk may be the first half of a CRLF.
    if (this.pendingCr && text.startsWith("\n")) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const ch = this.buffer[i];
      if (ch !== "\n" && ch !== "\r") continue;
      this.line(this.buffer.slice(start, i), out);
      if (ch === "\r") {
        if (i + 1 === this.buffer.length) this.pendingCr = true;
        else if (this.buffer[i + 1] === "\n") i++;
      }
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === "") {
      if (this.data.length > 0) {
        const message: SseMessage = { event: this.event || "message", data: this.data.join("\n") };
        if (this.id !== undefined) message.id = this.id;
        out.push(message);
      }
      this.data = [];
      this.event = "";
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id" && !value.includes("\0")) this.id = value;
  }
}
