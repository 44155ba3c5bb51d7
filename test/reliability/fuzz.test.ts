import { describe, expect, test } from "bun:test";
import { tempDir } from "../helpers/dl.ts";
import { type Rng, rng, seedFrom, sizeFrom } from "./rng.ts";
import { isErrorReply, type RpcMessage, rawServe, replyText } from "./rpc-proc.ts";

/**
 * Fuzz: a seeded generator sends malformed input to every MCP tool and protocol method
 * of a real `dl serve` over stdio. Asserted: the server neither dies nor hangs (a ping
 * after every batch), stdout holds only JSON-RPC 2.0 lines, every request with an id is
 * answered, a wrongly typed argument is refused naming the field and what it expects, and
 * no secret from the environment (or a passed api_key) ever shows up on stdout or stderr.
 *
 * CI runs DL_FUZZ_CASES=400 (the default); `npm run fuzz` runs thousands. DL_FUZZ_SEED
 * replays a run; the seed is printed whenever the test fails.
 */

const SEED = seedFrom("DL_FUZZ_SEED");
const CASES = sizeFrom("DL_FUZZ_CASES", 400);
const BATCH = 25;

/** Distinctive values that must never be echoed anywhere. */
const SECRETS: Record<string, string> = {
  DELEGATE_LOCAL_KEY: "fzsecret-local-Q7W3",
  OPENAI_API_KEY: "fzsecret-openai-Q7W3",
  ANTHROPIC_API_KEY: "fzsecret-anthropic-Q7W3",
  GEMINI_API_KEY: "fzsecret-gemini-Q7W3",
  GITHUB_TOKEN: "fzsecret-github-Q7W3",
  AWS_SECRET_ACCESS_KEY: "fzsecret-aws-Q7W3",
  CODEX_API_KEY: "fzsecret-codex-Q7W3",
};
const API_KEY_ARG = "fzsecret-apikeyarg-Q7W3";
const MARKER = "Q7W3";

type Schema = { type?: string; enum?: unknown[]; properties?: Record<string, Schema>; required?: string[] };
type Tool = { name: string; inputSchema: Schema };

/** A JSON value the generator can send; `raw` cases are sent as text as they are. */
type Case =
  | { kind: "call"; id: number; tool: string; field?: string; value?: unknown; args: unknown; expectField: boolean }
  | { kind: "rpc"; id: unknown; msg: unknown; answered: boolean }
  | { kind: "raw"; text: string | Uint8Array };

const UNICODE = ["🦀", "\u202e", "\u0000", "\u200b", "é", "\ud800", "\uffff", "𝕏", "\u2028", "ﷺ", "\x1b[31m"];

function bigString(r: Rng, max: number): string {
  const n = 1 + r.int(max);
  const unit = r.pick(["a", "é", "🦀", "\u202e", "x\n", " "]);
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
}

function unicodeString(r: Rng): string {
  let s = "";
  for (let i = 0, n = 1 + r.int(40); i < n; i++) s += r.pick(UNICODE);
  return s;
}

function nested(depth: number): unknown {
  let v: unknown = "deep";
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

/** A value of any shape, mostly wrong for whatever field it lands in. */
function badValue(r: Rng): unknown {
  switch (r.int(16)) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.pick([0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER]);
    case 3:
      return "";
    case 4:
      return bigString(r, r.chance(0.1) ? 300_000 : 5_000);
    case 5:
      return unicodeString(r);
    case 6:
      return [badValue(r), badValue(r)];
    case 7:
      return { nested: badValue(r) };
    case 8:
      return nested(1 + r.int(200));
    case 9:
      return r.pick(["../../etc/passwd", "/", "~", "/proc/self/environ", "\\\\host\\share", "C:\\Windows"]);
    case 10:
      return r.pick(["http://169.254.169.254/", "http://127.1/", "file:///etc/passwd", "javascript:1", "ftp://x"]);
    case 11:
      return r.pick(["__proto__", "constructor", "prototype", "toString", "hasOwnProperty"]);
    case 12:
      return [];
    case 13:
      return {};
    case 14:
      return String(r.int(1e9));
    default:
      return Array.from({ length: 1 + r.int(300) }, () => r.pick(["x", 1, null]));
  }
}

const jsonType = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/** Whether `v` is plainly not what `s` accepts (type or enum), so a refusal must follow. */
function mismatch(s: Schema | undefined, v: unknown): boolean {
  if (!s?.type) return false;
  const t = jsonType(v);
  if (s.type === "integer") return t !== "number" || !Number.isInteger(v);
  if (s.type !== t) return true;
  return s.enum !== undefined && !s.enum.includes(v);
}

/** A plausible value for a field, so that a call can get past the other fields' checks. */
function plausible(name: string, s: Schema): unknown {
  if (s.enum) return s.enum[0];
  if (name === "api_key") return API_KEY_ARG;
  if (name === "provider_url") return "http://127.0.0.1:9/v1";
  if (name === "workdir") return "/nonexistent-fuzz-workdir";
  if (s.type === "string") return name === "ids" ? "cx-nope" : "fuzz";
  if (s.type === "integer" || s.type === "number") return 1;
  if (s.type === "boolean") return false;
  if (s.type === "array") return ["cx-nope"];
  return {};
}

function protoArgs(r: Rng): string {
  const key = r.pick(["__proto__", "constructor", "prototype"]);
  const inner = r.pick(['{"polluted":true}', '{"prototype":{"polluted":true}}', "null", '"x"', "[]"]);
  return `{"${key}":${inner},"task":"t","agent_name":"a","id":"x","ids":["x"]}`;
}

function callCase(r: Rng, tools: Tool[], id: number): Case {
  const tool = r.pick(tools);
  const props = Object.entries(tool.inputSchema.properties ?? {});
  const roll = r.int(10);
  if (roll === 0 || props.length === 0) {
    const args = r.pick([null, [], "args", 42, true, [{}], { "": 1 }]);
    return { kind: "call", id, tool: tool.name, args, expectField: false };
  }
  const [field, schema] = r.pick(props);
  const value = badValue(r);
  const args: Record<string, unknown> = {};
  if (roll < 5) for (const [n, s] of props) if (tool.inputSchema.required?.includes(n)) args[n] = plausible(n, s);
  args[field] = value;
  if (r.chance(0.2)) args[`extra_${r.int(100)}`] = badValue(r);
  return { kind: "call", id, tool: tool.name, field, value, args, expectField: mismatch(schema, value) };
}

function rpcCase(r: Rng, id: number, tools: Tool[]): Case {
  const tool = r.pick(tools).name;
  const variants: (() => Case)[] = [
    () => ({
      kind: "rpc",
      id,
      msg: {
        jsonrpc: "2.0",
        id,
        method: r.pick([
          "resources/list",
          "prompts/list",
          "prompts/get",
          "completion/complete",
          "resources/read",
          "sampling/createMessage",
          "",
          "x".repeat(5000),
          "__proto__",
          "constructor",
        ]),
        params: badValue(r),
      },
      answered: true,
    }),
    () => ({
      kind: "rpc",
      id,
      msg: { jsonrpc: "2.0", id, method: "tools/call", params: { name: badValue(r), arguments: {} } },
      answered: true,
    }),
    () => ({ kind: "rpc", id, msg: { jsonrpc: "2.0", id, method: "tools/call", params: badValue(r) }, answered: true }),
    () => ({
      kind: "rpc",
      id,
      msg: { jsonrpc: "2.0", id, method: "tools/call", params: { name: `${tool}_nope`, arguments: {} } },
      answered: true,
    }),
    () => ({ kind: "rpc", id, msg: { jsonrpc: "2.0", id, method: "tools/list", params: badValue(r) }, answered: true }),
    () => ({
      kind: "rpc",
      id,
      msg: { jsonrpc: "2.0", id, method: "logging/setLevel", params: { level: badValue(r) } },
      answered: true,
    }),
    () => ({ kind: "rpc", id, msg: { jsonrpc: "2.0", id, method: "initialize", params: badValue(r) }, answered: true }),
    () => ({ kind: "rpc", id, msg: { jsonrpc: "2.0", id, method: "ping", params: badValue(r) }, answered: false }),
    () => ({
      kind: "rpc",
      id: undefined,
      msg: {
        jsonrpc: "2.0",
        method: r.pick([
          "notifications/cancelled",
          "notifications/initialized",
          "notifications/x",
          "notifications/progress",
        ]),
        params: badValue(r),
      },
      answered: false,
    }),
    () => ({
      kind: "rpc",
      id: undefined,
      msg: { jsonrpc: r.pick(["1.0", 2, null, undefined]), id, method: "ping" },
      answered: false,
    }),
    () => ({
      kind: "rpc",
      id: undefined,
      msg: { jsonrpc: "2.0", id: r.pick([{}, [], true, 1.5, -1, null]), method: "ping" },
      answered: false,
    }),
    () => ({
      kind: "rpc",
      id: undefined,
      msg: { jsonrpc: "2.0", id: `resp-${id}`, result: badValue(r) },
      answered: false,
    }),
  ];
  return r.pick(variants)();
}

function rawCase(r: Rng): Case {
  const variants: (() => string | Uint8Array)[] = [
    () => "not json\n",
    () => '{"jsonrpc":"2.0","id":1,"method":"ping"\n',
    () => `${r.pick(["null", "1", '"s"', "true", "[]", "{}", "[1,2]"])}\n`,
    () => "\n",
    () => "   \t \n",
    () => `${"[".repeat(1 + r.int(50_000))}\n`,
    () =>
      `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"poll_codex","arguments":${'{"a":'.repeat(2000)}1${"}".repeat(2000)}}}\n`,
    () => new Uint8Array([0xff, 0xfe, 0x7b, 0x80, 0xc0, 0x0a]),
    () => `[{"jsonrpc":"2.0","id":"batch-x","method":"ping"},{"jsonrpc":"2.0","method":"tools/list"}]\n`,
    () => `{"jsonrpc":"2.0","method":"tools/call","params":${protoArgs(r)}}\n`,
  ];
  return { kind: "raw", text: r.pick(variants)() };
}

function makeCase(r: Rng, tools: Tool[], id: number): Case {
  const roll = r.int(10);
  if (roll < 6) return callCase(r, tools, id);
  if (roll < 8) return rpcCase(r, id, tools);
  if (roll < 9) {
    // Prototype keys in the arguments themselves, as raw JSON text (JSON.stringify would drop __proto__).
    const tool = r.pick(tools).name;
    return {
      kind: "rpc",
      id,
      msg: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","arguments":${protoArgs(r)}}}`,
      answered: true,
    };
  }
  return rawCase(r);
}

function wireText(c: Case): string | Uint8Array {
  if (c.kind === "raw") return c.text;
  if (c.kind === "rpc") return `${typeof c.msg === "string" ? c.msg : JSON.stringify(c.msg)}\n`;
  return `${JSON.stringify({ jsonrpc: "2.0", id: c.id, method: "tools/call", params: { name: c.tool, arguments: c.args } })}\n`;
}

/** What a refusal of a wrongly typed field must contain: the field, and the word for what is allowed. */
function namesFieldAndAllowed(text: string, field: string): boolean {
  return text.includes(field) && /expected|must|allowed|one of|at most|at least|pass |use /i.test(text);
}

describe("fuzz: malformed input to every MCP tool and method over stdio", () => {
  test(`seed ${SEED}, ${CASES} cases`, async () => {
    const state = tempDir("fuzz");
    const s = rawServe({
      ...SECRETS,
      DELEGATE_LOCAL_URL: "http://127.0.0.1:9",
      DELEGATE_CODEX_STATE_DIR: `${state}/codex`,
      DELEGATE_DSH_STATE_DIR: `${state}/dsh`,
      DELEGATE_GEMINI_STATE_DIR: `${state}/gemini`,
      DELEGATE_CODEX_BIN: "/nonexistent/codex",
      DELEGATE_DSH_LAUNCHER: "/nonexistent/dsh",
      DELEGATE_AGY_BIN: "/nonexistent/agy",
    });
    const note = (msg: string) => `${msg} (seed ${SEED}: rerun with DL_FUZZ_SEED=${SEED} DL_FUZZ_CASES=${CASES})`;
    try {
      const init = await s.initialize();
      expect(init.result, note("initialize failed")).toBeDefined();
      await s.send({ jsonrpc: "2.0", id: "list", method: "tools/list" });
      const tools = ((await s.reply("list", 10_000)).result?.tools ?? []) as Tool[];
      expect(tools.length, note("tools/list returned no tools")).toBeGreaterThan(10);

      const r = rng(SEED);
      let id = 0;
      let answered = 0;
      const oversizeAt = r.int(Math.max(1, Math.floor(CASES / BATCH)));
      for (let b = 0; b * BATCH < CASES; b++) {
        const batch = Array.from({ length: Math.min(BATCH, CASES - b * BATCH) }, () => makeCase(r, tools, ++id));
        if (b === oversizeAt) {
          // One message over the stdio cap per run: refused, and the stream stays in step.
          batch.push({
            kind: "raw",
            text: `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"cancel_codex","arguments":{"id":"${"x".repeat(11 * 1024 * 1024)}"}}}\n`,
          });
        }
        for (const c of batch) await s.writeRaw(wireText(c));
        for (const c of batch) {
          if (c.kind === "raw" || (c.kind === "rpc" && !c.answered)) continue;
          const m: RpcMessage = await s.reply(c.id, 60_000).catch((e: Error) => {
            throw new Error(note(`${e.message}; the case was ${String(wireText(c)).slice(0, 300)}`));
          });
          answered++;
          if (c.kind === "call" && c.expectField) {
            const text = replyText(m);
            expect(
              isErrorReply(m),
              note(`${c.tool}.${c.field}=${JSON.stringify(c.value)?.slice(0, 80)} was accepted`),
            ).toBe(true);
            expect(
              namesFieldAndAllowed(text, c.field!),
              note(
                `${c.tool}.${c.field}: the refusal does not name the field and what is allowed: ${text.slice(0, 300)}`,
              ),
            ).toBe(true);
          }
        }
        if (b === oversizeAt) expect((await s.reply("big", 30_000)).error?.code).toBe(-32600);
        await s.ping(15_000).catch((e: Error) => {
          throw new Error(note(`the server stopped answering ping after batch ${b}: ${e.message}`));
        });
        expect(s.proc.exitCode, note(`dl serve died in batch ${b}`)).toBeNull();
      }
      expect(answered).toBeGreaterThan(CASES / 3);
      expect(s.impure, note("stdout carried something other than JSON-RPC")).toEqual([]);
      const all = `${s.lines.join("\n")}\n${s.stderr()}`;
      const leaked = [...Object.values(SECRETS), API_KEY_ARG].filter((v) => all.includes(v));
      expect(leaked, note("a secret was echoed")).toEqual([]);
      expect(all.includes(MARKER), note("a secret's marker was echoed")).toBe(false);
    } catch (e) {
      console.error(`fuzz failed: rerun with DL_FUZZ_SEED=${SEED} DL_FUZZ_CASES=${CASES}`);
      throw e;
    } finally {
      const code = await s.close();
      expect(code, note(`dl serve exited ${code} when stdin closed; stderr: ${s.stderr().slice(-1000)}`)).toBe(0);
    }
  }, 600_000);

  test("a request whose params is not an object, or a line that is not JSON, is answered, not dropped", async () => {
    const s = rawServe({ DELEGATE_CODEX_STATE_DIR: tempDir("fuzz-params") });
    try {
      await s.initialize();
      for (const [i, params] of [null, 5, "x", []].entries()) {
        await s.send({ jsonrpc: "2.0", id: `p${i}`, method: i % 2 ? "tools/list" : "tools/call", params });
        const m = await s.reply(`p${i}`, 10_000);
        expect(m.error?.code).toBe(-32600);
        expect(m.error?.message).toContain("params (when given) an object");
      }
      await s.writeRaw("{not json\n");
      await s.writeRaw("[1,2]\n");
      await s.ping();
      const nullIds = s.lines.map((l) => JSON.parse(l) as RpcMessage).filter((m) => m.id === null);
      expect(nullIds.map((m) => m.error?.code)).toEqual([-32700, -32600]);
      expect(s.impure).toEqual([]);
    } finally {
      expect(await s.close()).toBe(0);
    }
  }, 30_000);
});
