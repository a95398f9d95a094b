// A TCP proxy in front of the daemon that can cut every open connection at once: the network
// dropping under a stream, without touching the daemon.
import { connect, createServer, type Server, type Socket } from "node:net";

export class CuttingProxy {
  url = "";
  accepted = 0;
  private sockets: Socket[] = [];
  private constructor(private readonly server: Server) {}

  static async start(targetPort: number): Promise<CuttingProxy> {
    const server = createServer();
    const proxy = new CuttingProxy(server);
    server.on("connection", (client) => {
      proxy.accepted += 1;
      const upstream = connect(targetPort, "127.0.0.1");
      proxy.sockets.push(client, upstream);
      client.pipe(upstream).on("error", () => undefined);
      upstream.pipe(client).on("error", () => undefined);
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const addr = server.address();
    proxy.url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
    return proxy;
  }

  /** Closes every connection made so far (new ones are still accepted). */
  cut(): void {
    for (const s of this.sockets.splice(0)) s.destroy();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((r) => this.server.close(r));
  }
}
