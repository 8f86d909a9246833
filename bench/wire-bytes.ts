/**
 * Bytes as they cross the network, for the terminal bench (decision 194): a WebSocket
 * subscriber reached through a loopback proxy that counts what the server sends (after
 * permessage-deflate, which the Worker's sockets and browsers negotiate), and the same
 * compression applied to an alternative's messages (one deflate stream with its context
 * kept from message to message, as permessage-deflate keeps it).
 */
import net from "node:net";
import zlib from "node:zlib";

/** A subscriber of `socketUrl` counting message text and the bytes on the wire. */
export async function wireSocket(socketUrl: string) {
  const target = new URL(socketUrl);
  const counts = { text: 0, wire: 0, updates: 0 };
  const proxy = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    client.pipe(upstream);
    upstream.on("data", (chunk: Buffer) => {
      counts.wire += chunk.length;
    });
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end);
    upstream.on("error", end);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const url = new URL(socketUrl);
  url.port = String((proxy.address() as net.AddressInfo).port);
  const socket = new WebSocket(url);
  const opened = new Promise<string>((resolve, reject) => {
    socket.addEventListener("open", () => resolve(socket.extensions), { once: true });
    socket.addEventListener("error", () => reject(new Error("the socket did not open")), {
      once: true,
    });
  });
  socket.addEventListener("message", (event) => {
    const data = typeof event.data === "string" ? event.data : "";
    counts.text += Buffer.byteLength(data);
    if (data.includes('"tool_update"')) counts.updates++;
  });
  return {
    counts,
    /** The extensions the server accepted ("permessage-deflate; …" when it compresses). */
    extensions: await opened,
    /** Starts counting again from zero. */
    reset() {
      counts.text = 0;
      counts.wire = 0;
      counts.updates = 0;
    },
    close() {
      socket.close();
      proxy.close();
    },
  };
}

/**
 * What `messages` cost one after another on a permessage-deflate socket: each deflated
 * with the context of those before it, less the 4 bytes the extension drops, plus a
 * frame header.
 * @example await compressedSize(paints) // bytes to send every paint, in order
 */
export async function compressedSize(messages: string[]): Promise<number> {
  const deflate = zlib.createDeflateRaw({ windowBits: 15 });
  let pending = 0;
  deflate.on("data", (chunk: Buffer) => {
    pending += chunk.length;
  });
  let total = 0;
  for (const message of messages) {
    deflate.write(message);
    // A sync flush ends each message on a byte boundary, as permessage-deflate does.
    await new Promise<void>((resolve) => deflate.flush(zlib.constants.Z_SYNC_FLUSH, resolve));
    const payload = Math.max(0, pending - 4);
    total += payload + (payload < 126 ? 2 : 4);
    pending = 0;
  }
  deflate.close();
  return total;
}
