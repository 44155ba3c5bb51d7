/**
 * bench/tools-list — what `tools/list` costs a host every session: the whole list as a
 * host receives it from `dist/dl serve` (names, titles, descriptions, input and output
 * schemas, annotations), in tokens (characters / 4 of its JSON), for three machines: none
 * of the coding CLIs installed (the default tool set), the Codex CLI on PATH, and every
 * backend's tools (DELEGATE_TOOLS=all).
 *
 * Baselines: in the same run, the same tool table converted the plain way (zod's JSON
 * Schema as it comes: safe-integer bounds, `additionalProperties`, …), and the figures
 * measured the same way at f2be180 (before issue 33 shortened descriptions and schemas).
 * Aim: the default list under 4,000 tokens.
 *
 *   npm run build && bun bench/tools-list.ts
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import { parseConfig } from "../src/config.ts";
import { ToolSurface } from "../src/mcp/tool-surface.ts";
import { defaultDeps } from "../src/services.ts";

const AIM_TOKENS = 4000;
/** Measured at f2be180 with this file's method (the "~5.9k by default, ~12.4k with every backend"). */
const BEFORE = { default: 5892, codex: 8266, all: 12401 } as const;

const root = resolve(import.meta.dir, "..");
const dl = join(root, "dist", "dl");
if (!existsSync(dl)) {
  console.error("dist/dl is missing: run `npm run build` first");
  process.exit(2);
}
const codexBin = dirname(Bun.which("codex", { PATH: join(root, "node_modules", ".bin") }) ?? "/nonexistent/codex");
const line = (m: object) => `${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`;

/** tools/list as dist/dl serve answers it after a 2025-11-25 initialize. */
async function listedTools(env: Record<string, string>): Promise<unknown[]> {
  const home = mkdtempSync(join(tmpdir(), "dl-bench-list-"));
  const p = Bun.spawn([dl, "serve"], {
    env: { HOME: home, DELEGATE_LOG_LEVEL: "warn", ...env },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
  });
  const clientInfo = { name: "bench", version: "1" };
  p.stdin.write(
    line({ id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo } }),
  );
  p.stdin.write(line({ method: "notifications/initialized" }) + line({ id: 2, method: "tools/list" }));
  p.stdin.flush();
  let buf = "";
  const reader = p.stdout.getReader();
  while (!(buf.includes('"id":2') && buf.endsWith("\n"))) {
    const { value, done } = await reader.read();
    if (done) throw new Error("dl serve exited before answering tools/list");
    buf += new TextDecoder().decode(value);
  }
  p.stdin.end();
  await p.exited;
  return JSON.parse(buf.split("\n").find((l) => l.includes('"id":2'))!).result.tools;
}

const tokens = (v: unknown) => Math.round(JSON.stringify(v).length / 4);

/** The same tools converted the plain way, in this process: the same-run baseline. */
function plainList(tools: string): unknown[] {
  const config = parseConfig({ HOME: mkdtempSync(join(tmpdir(), "dl-bench-list-")), DELEGATE_TOOLS: tools });
  const surface = new ToolSurface(defaultDeps(config, "bench"));
  return surface.names().map((name) => {
    const t = surface.tool(name)!;
    const plain = (s: z.ZodType, io: "input" | "output") => z.toJSONSchema(s, { io, unrepresentable: "any" });
    const { def } = t;
    return {
      name,
      title: def.title,
      description: def.description,
      inputSchema: plain(t.input(), "input"),
      outputSchema: plain(t.output(), "output"),
      annotations: def.annotations,
    };
  });
}

const machines = [
  { label: "default (no coding CLI installed)", key: "default", env: { PATH: "/usr/bin:/bin" }, tools: "agent" },
  { label: "the Codex CLI on PATH", key: "codex", env: { PATH: `${codexBin}:/usr/bin:/bin` }, tools: "agent,codex" },
  {
    label: "every backend (DELEGATE_TOOLS=all)",
    key: "all",
    env: { PATH: "/usr/bin:/bin", DELEGATE_TOOLS: "all" },
    tools: "all",
  },
] as const;

console.log("bench/tools-list: the whole tools/list of dist/dl serve, tokens = characters / 4 of its JSON");
for (const m of machines) {
  const listed = await listedTools(m.env);
  const now = tokens(listed);
  const plain = tokens(plainList(m.tools));
  const before = BEFORE[m.key];
  const aim = m.key === "default" ? `; aim < ${AIM_TOKENS}: ${now < AIM_TOKENS ? "met" : "missed"}` : "";
  console.log(
    `  ${m.label.padEnd(36)} ${String(listed.length).padStart(2)} tools  ${String(now).padStart(5)} tokens` +
      `  (plain conversion ${plain}: ${(now / plain).toFixed(2)}x; at f2be180 ${before}: ${(now / before).toFixed(2)}x${aim})`,
  );
  for (const t of listed as { name: string; description: string; inputSchema: unknown; outputSchema: unknown }[])
    console.log(
      `      ${t.name.padEnd(24)} ${String(tokens(t)).padStart(4)}  (description ${tokens(t.description)}, input ${tokens(t.inputSchema)}, output ${tokens(t.outputSchema)})`,
    );
}
