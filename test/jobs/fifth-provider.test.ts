import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Config } from "../../src/config.ts";
import { PROVIDER_MODULES } from "../../src/jobs/providers/index.ts";
import { echo } from "../fixture/echo/index.ts";
import { tempDir } from "../helpers/dl.ts";
import { connectInProcess, type InProcessSession } from "../helpers/in-process.ts";
import { pidAlive } from "../helpers/proc.ts";
import { until } from "../helpers/until.ts";
import { makeRepo } from "./helpers.ts";

/**
 * Adding a provider is its folder and its entry in the list a server serves: the
 * test-only `echo` provider (test/fixture/echo/, nothing outside it) is registered as
 * `[...PROVIDER_MODULES, echo]` and served by the same server factory as dl serve, whose
 * tool index, tool availability, job services and MCP tasks all iterate that list. Its
 * jobs are real child processes in their own groups.
 */
let s: InProcessSession;
let repo: string;

type Submitted = { jobs: { id: string; status: string }[]; watch: string };
type Polled = { jobs: { id: string; status: string; final_response: string | null; provider: string }[] };

const call = async <T>(name: string, args: Record<string, unknown>) => {
  const r = (await s.client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: unknown };
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.structuredContent)}`);
  return r.structuredContent as T;
};

beforeAll(async () => {
  const root = tempDir("fifth-provider");
  repo = makeRepo(root, "repo", 0).repo;
  const stateDir = join(root, "echo-jobs");
  // Its store is one more entry of the paths every provider's comes from.
  const withEcho = (c: Config) =>
    ({ ...c, paths: { ...c.paths, stateDirs: { ...c.paths.stateDirs, [echo.facts.name]: stateDir } } }) as Config;
  s = await connectInProcess({}, { providers: [...PROVIDER_MODULES, echo], config: withEcho });
});
afterAll(async () => {
  await s?.close();
});

describe("a fifth provider through the one list", () => {
  test("its tools are listed beside the four, from its module alone", async () => {
    const names = (await s.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["submit_echo", "poll_echo", "cancel_echo"]));
    expect(names).toEqual(expect.arrayContaining(["submit_codex", "poll_dsh", "cancel_agent"]));
    const submit = (await s.client.listTools()).tools.find((t) => t.name === "submit_echo")!;
    expect(submit.title).toBe("Submit echo jobs");
  });

  test("submit, poll until done, and a bad task refused naming the field", async () => {
    const sub = await call<Submitted>("submit_echo", {
      tasks: [{ text: "hello from a fifth provider", workdir: repo }],
    });
    const id = sub.jobs[0]!.id;
    expect(id).toMatch(/^ec-[0-9a-f]{10}$/);
    expect(sub.watch).toContain(id);
    const done = await until(async () => {
      const v = (await call<Polled>("poll_echo", { ids: [id] })).jobs[0]!;
      return v.status === "done" ? v : null;
    }, "the echo job to end");
    expect(done).toMatchObject({ provider: "echo", final_response: "echo: hello from a fifth provider" });
    const bad = (await s.client.callTool({ name: "submit_echo", arguments: { tasks: [{ workdir: repo }] } })) as {
      isError?: boolean;
      structuredContent?: { failure_kind?: string; error?: string };
    };
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ failure_kind: "invalid_arguments" });
    expect(bad.structuredContent?.error).toContain("text");
  });

  test("cancel kills a running job's process group; it ends cancelled", async () => {
    const sub = await call<Submitted>("submit_echo", { tasks: [{ text: "stay", workdir: repo, stay_s: 120 }] });
    const id = sub.jobs[0]!.id;
    const svc = await s.deps.jobService(echo);
    const row = await until(() => {
      const r = svc.engine.row(id);
      return r?.status === "running" && r.child_pgid ? r : null;
    }, "the echo child to run");
    const cancelled = await call<{ status: string; changed: boolean }>("cancel_echo", { id });
    expect(cancelled).toMatchObject({ status: "cancelled", changed: true });
    await until(() => !pidAlive(row.child_pgid!), "the echo child's group to be gone");
    expect((await call<Polled>("poll_echo", { ids: [id] })).jobs[0]!.status).toBe("cancelled");
  });
});
