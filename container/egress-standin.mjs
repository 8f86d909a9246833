// A stand-in for workerd's egress sidecar (`cloudflare/proxy-everything`, pulled from
// Docker Hub, which local dev and CI may not reach). LOCAL DEV AND TESTS ONLY: it only
// tunnels the Worker's requests INTO the container; it enforces NO outbound rules
// (enableInternet, allowedHosts and deniedHosts are not applied by it). The sandbox's
// own commands reach only what their network namespace and the sandbox's egress proxy
// allow (decision 183), which it does not change. workerd starts it with `--http-ingress-address <ip:port>` and speaks to it:
// `CONNECT` with `X-Dst-Addr: <ip:port>` to reach a container port, `GET /ca` for a
// PEM certificate, `PUT /egress` for outbound settings (accepted and ignored).
import http from "node:http";
import net from "node:net";
import { rootCertificates } from "node:tls";

/** The value of `--http-ingress-address X` or `--http-ingress-address=X` (one dash too). */
function ingressAddress(argv) {
  for (const [i, arg] of argv.entries()) {
    const m = /^--?http-ingress-address(?:=(.*))?$/.exec(arg);
    if (m) return m[1] ?? argv[i + 1];
  }
  return "0.0.0.0:39000";
}
const address = ingressAddress(process.argv.slice(2));
const split = address.lastIndexOf(":");
const host = address.slice(0, split) || "0.0.0.0";
const port = Number(address.slice(split + 1));

const server = http.createServer((req, res) => {
  req.resume();
  if (req.method === "GET" && req.url === "/ca") {
    // workerd wants parseable certificate bytes; this stand-in intercepts no TLS.
    res.writeHead(200, { "content-type": "application/x-pem-file" });
    res.end(rootCertificates[0]);
    return;
  }
  res.writeHead(req.method === "PUT" && req.url === "/egress" ? 204 : 404);
  res.end();
});

server.on("connect", (req, socket, head) => {
  const target = String(req.headers["x-dst-addr"] ?? req.url ?? "");
  const at = target.lastIndexOf(":");
  const upstream = net.connect(Number(target.slice(at + 1)), target.slice(0, at));
  upstream.once("connect", () => {
    socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    socket.pipe(upstream).pipe(socket);
  });
  // A port nobody listens on yet is a 400, as the real sidecar answers (workerd retries).
  upstream.once("error", () => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
  });
  socket.once("error", () => upstream.destroy());
  socket.once("close", () => upstream.destroy());
});

server.listen(port, host, () => {
  console.log(`egress stand-in (tunnels ingress only, enforces no outbound rules) on ${address}`);
});
process.on("SIGTERM", () => process.exit(0));
