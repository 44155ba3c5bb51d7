import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { type FakeModel, startFakeModel } from "../fixture/fake-model.ts";
import { CLAUDE, claudeUntil, stopAllClaude } from "../helpers/claude-run.ts";
import { type Identity, identityNames, makeIdentity } from "../helpers/run-as.ts";
import { LAYOUTS } from "./attack-layouts.ts";
import { payload, payloadJs, prelude, ROUTES } from "./attack-routes.ts";
import { buildLayouts } from "./attack-suite.ts";

/**
 * The attack suite's control (attack-host.ts `hostTools`) emulates what Claude Code runs by
 * reading its settings; this file asks the real Claude Code (node_modules/.bin/claude, the
 * compiled CLI `npm ci` installs). In the repo layout, with a fresh HOME where the user
 * installed the repository's directory-marketplace plugin, `claude -p hi` (no API key, no
 * network) runs the project settings' hooks and the plugin's `hooks/hooks.json` before any
 * API call. Its SessionStart hooks all end before its UserPromptSubmit hooks start
 * (measured), so the user's own UserPromptSubmit hook is the sign that claude got past
 * every hook a route could plant: then a missing attack marker means it was not there.
 *
 * Unguarded, the routes' own `sh` planted on the host runs at claude's start; after an
 * agent's write tools tried the routes' own calls through dist/dl, it does not. claude
 * never ends on its own without an API (it retries for a minute or more): each start is
 * killed as a process group once the markers answer, and afterAll kills any left.
 */

const ROUTE_IDS = ["claude-settings", "claude-plugin-hooks"];
const routes = ROUTE_IDS.map((id) => ROUTES.find((r) => r.id === id)!);
const KEY = "sk-claude-real-key-0001";
/** The user's own hooks, installed before any job: one in the project settings, one in the plugin. */
const LEGIT = ["legit-prompt", "legit-plugin"];

let id: Identity;
let fake: FakeModel;

interface Case {
  w: string;
  home: string;
  markers: string;
}

function sh(c: Case, argv: string[]): string {
  const r = id.run(argv, { cwd: c.w, env: id.env({ HOME: c.home }) });
  if (r.code !== 0) throw new Error(`${argv.join(" ")}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}

/** The repo layout with the user's own hooks, and its plugin installed by the user in a fresh HOME. */
function userProject(name: string): Case {
  const root = join(id.base, `proj-${name}`);
  const c = {
    w: join(root, LAYOUTS.repo.workdir),
    home: join(id.base, `home-${name}`),
    markers: join(id.base, `m-${name}`),
  };
  for (const d of [root, c.home, c.markers]) mkdirSync(d);
  id.own(id.base);
  buildLayouts({ id, root }, "repo");
  const settingsPath = join(c.w, ".claude/settings.json");
  const settings = JSON.parse(readFileSync(settingsPath, "utf8"));
  const hook = (marker: string) => [{ hooks: [{ type: "command", command: `echo ran > ${c.markers}/${marker}` }] }];
  settings.hooks.UserPromptSubmit = hook("legit-prompt");
  writeFileSync(settingsPath, JSON.stringify(settings));
  writeFileSync(
    join(c.w, "tools/market/plugins/fmt/hooks/hooks.json"),
    JSON.stringify({ hooks: { SessionStart: hook("legit-plugin") } }),
  );
  sh(c, ["git", "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qam", "the user's hooks"]);
  sh(c, [CLAUDE, "plugin", "marketplace", "add", "./tools/market"]);
  sh(c, [CLAUDE, "plugin", "install", "fmt@team"]);
  id.own(id.base);
  return c;
}

/** `claude -p hi` in the workdir as the user, until `done` holds for the markers. */
function claudeIn(c: Case, done: (m: string[]) => boolean) {
  return claudeUntil(c.w, id.env({ HOME: c.home }), c.markers, done);
}

/** One agent job (`tools: Read, Write, Edit`, no shell) whose scripted model makes every route's own calls; the results it got back. */
async function agentJob(c: Case) {
  const agents = join(id.base, "agents");
  mkdirSync(agents, { recursive: true });
  writeFileSync(join(agents, "coder.md"), "---\nname: coder\ndescription: c\ntools: Read, Write, Edit\n---\nCode.\n");
  const calls = routes.flatMap((r) => r.tools(c.w, payload(c.markers, r.id), payloadJs(c.markers, r.id)));
  fake.script(
    { tools: calls.map((call, i) => ({ id: `toolu_${i}`, name: call.name, input: call.input })) },
    { text: "done" },
  );
  const env = id.env({
    DELEGATE_LOCAL_URL: fake.anthropicUrl,
    DELEGATE_LOCAL_KEY: KEY,
    DELEGATE_LOCAL_AGENTS_DIR: agents,
    DELEGATE_LOCAL_MODEL: "attack-model",
  });
  const [command, ...args] = id.argv([id.dl, "serve"]);
  const client = new Client({ name: "claude-real", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: command!, args, env, cwd: id.base, stderr: "pipe" }));
  try {
    await client.callTool(
      { name: "delegate_to_local_agent", arguments: { agent_name: "coder", task: "do the work", workdir: c.w } },
      { timeout: 180_000 },
    );
  } finally {
    await client.close();
  }
  const req = fake.requests.find((q) => JSON.stringify(q.body).includes("tool_result"));
  const msgs = (req?.body.messages ?? []) as { content: unknown }[];
  const blocks = (msgs[msgs.length - 1]?.content ?? []) as { is_error?: boolean }[];
  return calls.map((call, i) => ({ path: call.input.path, refused: blocks[i]?.is_error === true }));
}

describe.skipIf(!existsSync(CLAUDE))(
  `the real Claude Code (${existsSync(CLAUDE) ? CLAUDE : "skipped: node_modules/.bin/claude is missing, npm ci installs it"})`,
  () => {
    beforeAll(async () => {
      id = makeIdentity(identityNames()[0]!, "claude-real");
      fake = await startFakeModel({ apiKey: KEY });
    });
    afterAll(async () => {
      await stopAllClaude();
      await fake?.stop();
      id?.cleanup();
    });

    test("unguarded: the routes planted on the host run at the next `claude -p`", async () => {
      const c = userProject("control");
      for (const r of routes) sh(c, ["sh", "-c", `${prelude(c.markers)}\n${r.sh}\n`]);
      const got = await claudeIn(c, (m) => ROUTE_IDS.every((r) => m.includes(r)));
      console.log(`real claude, unguarded: markers ${JSON.stringify(got.markers)} after ${got.ms} ms`);
      expect(got.markers).toEqual(expect.arrayContaining(ROUTE_IDS));
    }, 180_000);

    test("after an agent's write tools tried the routes through dist/dl, `claude -p` runs the user's hooks only", async () => {
      const c = userProject("tools");
      const results = await agentJob(c);
      const got = await claudeIn(c, (m) => LEGIT.every((l) => m.includes(l)) || ROUTE_IDS.some((r) => m.includes(r)));
      console.log(`real claude, after the tools job: markers ${JSON.stringify(got.markers)} after ${got.ms} ms`);
      expect(got.markers).toEqual(LEGIT.sort());
      // The job ran: each route's payload script (an ordinary file) was written; every planting call was refused.
      expect(results).toEqual(results.map((r) => ({ path: r.path, refused: !r.path?.startsWith(".payloads/") })));
    }, 240_000);
  },
);
