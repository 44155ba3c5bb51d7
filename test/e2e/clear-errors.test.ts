import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeResponses, startFakeResponses } from "../fixture/fake-responses.ts";
import { codexServeEnv, markerRouter } from "../helpers/codex-home.ts";
import { connectDl, type DlSession, runDl, tempDir } from "../helpers/dl.ts";
import { makeRepo } from "../jobs/helpers.ts";

/**
 * Errors that used to mislead, through dist/dl: each must say what is wrong.
 * - a Codex model named like an Object.prototype key ("job storage failed (TypeError)");
 * - a state dir under a regular file ("internal error … try again");
 * - an unusable job store under `dl wait` ("MISSING … check the id", after 30 s).
 */
let fake: FakeResponses;
let root: string;
const sessions: DlSession[] = [];

function serveEnv(stateDir: string): Record<string, string> {
  return codexServeEnv(root, fake.baseUrl, stateDir);
}

async function serve(stateDir: string, extra: Record<string, string> = {}): Promise<DlSession> {
  const s = await connectDl({ ...serveEnv(stateDir), ...extra });
  sessions.push(s);
  return s;
}

async function errorText(s: DlSession, name: string, args: Record<string, unknown>): Promise<string> {
  const r = (await s.client.callTool({ name, arguments: args }, { timeout: 60_000 })) as {
    isError?: boolean;
    content: { text: string }[];
  };
  expect(r.isError).toBe(true);
  return r.content[0]?.text ?? "";
}

beforeAll(() => {
  fake = startFakeResponses(markerRouter());
  root = tempDir("clear-errors");
});
afterAll(async () => {
  for (const s of sessions) await s.close().catch(() => {});
  await fake?.stop();
});

describe("errors that say what is wrong", () => {
  test("a Codex model named __proto__ or constructor is an unknown model, not a storage failure", async () => {
    const s = await serve(join(root, "state-proto"));
    const repo = makeRepo(root, "proto", 0).repo;
    for (const model of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
      const text = await errorText(s, "submit_codex", { tasks: [{ task: "x", workdir: repo, model }] });
      expect(text).toContain(`unknown Codex model "${model}"`);
      expect(text).not.toContain("storage");
    }
  }, 60_000);

  test("a state dir under a regular file: the Codex tools say the path holds a file, not 'internal error'", async () => {
    const file = join(root, "a-file");
    writeFileSync(file, "x");
    const s = await serve(join(file, "codex-jobs"));
    const repo = makeRepo(root, "under-file", 0).repo;
    for (const [name, args] of [
      ["submit_codex", { tasks: [{ task: "x", workdir: repo }] }],
      ["poll_codex", { ids: ["cx-0123456789"] }],
    ] as const) {
      const text = await errorText(s, name, args);
      expect(text).not.toContain("internal error");
      expect(text).toContain("a part of the state directory's path is a file, not a directory");
      expect(text).toContain("point DELEGATE_CODEX_STATE_DIR elsewhere");
      expect(text).not.toContain(file); // storage errors name no path
    }
  }, 60_000);

  test("the same for the dsh and agent job tools, each naming its own state dir variable", async () => {
    const file = join(root, "b-file");
    writeFileSync(file, "x");
    const s = await serve(join(root, "state-other"), {
      DELEGATE_DSH_STATE_DIR: join(file, "dsh"),
      DELEGATE_AGENT_STATE_DIR: join(file, "agent"),
    });
    const repo = makeRepo(root, "under-file-2", 0).repo;
    const dsh = await errorText(s, "submit_dsh", { tasks: [{ task: "x", model: "m", workdir: repo }] });
    expect(dsh).toContain("point DELEGATE_DSH_STATE_DIR elsewhere");
    const agent = await errorText(s, "poll_agent", { ids: ["ag-0123456789"] });
    expect(agent).toContain("point DELEGATE_AGENT_STATE_DIR elsewhere");
    for (const text of [dsh, agent]) expect(text).not.toContain(file);
  }, 60_000);

  test("dl wait on an unusable store says so at once (exit 2), not MISSING after 30 s", async () => {
    const file = join(root, "another-file");
    writeFileSync(file, "x");
    const corrupt = join(root, "corrupt-state");
    mkdirSync(corrupt, { recursive: true });
    writeFileSync(
      join(corrupt, "jobs.sqlite"),
      "this is not an SQLite database, just text that fills a page. ".repeat(100),
    );
    for (const [stateDir, reason] of [
      [join(file, "codex-jobs"), "a part of the state directory's path is a file"],
      [corrupt, "not an SQLite database"],
    ] as const) {
      const t0 = performance.now();
      const r = await runDl(["wait", "cx-0123456789"], { DELEGATE_CODEX_STATE_DIR: stateDir });
      const ms = performance.now() - t0;
      expect(r.code).toBe(2);
      expect(r.stdout).toContain("cx-0123456789 UNREADABLE");
      expect(r.stdout).toContain(reason);
      expect(r.stdout).toContain("DELEGATE_CODEX_STATE_DIR");
      expect(r.stdout).not.toContain("MISSING");
      expect(r.stderr).toContain("codex job store cannot be used");
      expect(ms).toBeLessThan(10_000);
      const json = await runDl(["wait", "--json", "cx-0123456789"], { DELEGATE_CODEX_STATE_DIR: stateDir });
      expect(JSON.parse(json.stdout.trim())).toMatchObject({ id: "cx-0123456789", status: "unreadable" });
    }
  }, 60_000);
});
