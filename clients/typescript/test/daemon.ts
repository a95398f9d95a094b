// A real `huddled` for the tests: the built binary as a child process on port 0 with its own
// temporary data directory (`HUDDLED` names the binary; else target/debug/huddled of this
// repository). Nothing is faked: every test speaks HTTP to it.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { HuddleClient } from "../src/index.js";

export const ADMIN = "typescript-client-admin-token-0123456789abcdef";
// dist-test/test/daemon.js → the repository root.
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");

export class Daemon {
  url = "";
  port = 0;
  private child?: ChildProcess;

  private constructor(readonly dataDir: string) {}

  static async start(port = 0, dataDir?: string): Promise<Daemon> {
    const d = new Daemon(dataDir ?? mkdtempSync(join(tmpdir(), "huddle-tsclient-")));
    await d.spawn(port);
    return d;
  }

  private spawn(port: number): Promise<void> {
    const bin = process.env.HUDDLED || join(REPO, "target/debug/huddled");
    if (!existsSync(bin)) throw new Error(`huddled is not built at ${bin}: run \`cargo build --bin huddled\` or set HUDDLED`);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("HUDDLE_") && v !== undefined) env[k] = v;
    Object.assign(env, {
      HUDDLE_ADMIN_TOKEN: ADMIN,
      HUDDLE_LOG: "warn,huddle_daemon=info",
      HUDDLE_TASKS_LEASE_SWEEP_MS: "50",
      HUDDLE_TASKS_MIN_LEASE_MS: "50",
    });
    const child = spawn(bin, ["--listen", `127.0.0.1:${port}`, "--data-dir", this.dataDir], { env, stdio: ["ignore", "ignore", "pipe"] });
    this.child = child;
    return new Promise((ok, fail) => {
      const lines = createInterface({ input: child.stderr! });
      const seen: string[] = [];
      lines.on("line", (line) => {
        const plain = line.replace(/\x1b\[[0-9;]*m/g, "");
        const found = /listening on (http:\/\/[0-9.:]+)/.exec(plain);
        if (found && !this.url) {
          this.url = found[1];
          this.port = Number(this.url.split(":").pop());
          ok();
        } else if (!this.url) seen.push(plain);
      });
      child.on("exit", () => {
        if (!this.url) fail(new Error(`huddled exited before listening:\n${seen.join("\n")}`));
      });
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }

  /** Stops and starts again on the same port and data. */
  async restart(): Promise<void> {
    await this.stop();
    const port = this.port;
    this.url = "";
    await this.spawn(port);
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

let teams = 0;

/** A fresh team with its coordinator; `agent()` adds more. */
export async function team(d: Daemon) {
  const name = `ts${process.pid}-${++teams}`;
  const admin = new HuddleClient({ url: d.url, token: ADMIN });
  await admin.createTeam(name);
  const inTeam = admin.withTeam(name);
  const coord = await inTeam.createAgent("coordinator", "coordinator");
  return {
    name,
    url: d.url,
    coordinator: new HuddleClient({ url: d.url, token: coord.token, team: name }),
    async agent(agentName: string, role: "tester" | "executor" | "observer") {
      const created = await inTeam.createAgent(agentName, role);
      return new HuddleClient({ url: d.url, token: created.token, team: name });
    },
  };
}

/** Waits (on a condition, with a deadline) until `check` holds. */
export async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The next `n` items of a stream, failing after `timeoutMs`. */
export async function take<T>(items: AsyncIterator<T>, n: number, timeoutMs = 30_000): Promise<T[]> {
  const got: T[] = [];
  const deadline = new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`only ${got.length} of ${n} items: ${JSON.stringify(got)}`)), timeoutMs).unref());
  while (got.length < n) {
    const next = await Promise.race([items.next(), deadline]);
    if (next.done) break;
    got.push(next.value);
  }
  return got;
}
