import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { CODEX_NPM_BIN } from "../helpers/codex-home.ts";
import { type Identity, identityNames, makeIdentity } from "../helpers/run-as.ts";
import { hostGitCommands, hostTools } from "./attack-host.ts";
import { LAYOUTS, type LayoutId } from "./attack-layouts.ts";
import { prelude, ROUTES } from "./attack-routes.ts";
import { AGENTS_IN_TREE, buildLayouts, CODEX_HOME_IN_TREE, plantDlReads, XDG_IN_TREE } from "./attack-suite.ts";

/**
 * The attack suite's control, in slices (jail-routes-control-<k>.test.ts: they run side
 * by side under --parallel, where one file held the whole serial run and, on a loaded
 * machine, outlasted its hook's time limit): each route marked `reaches` planted on the host itself,
 * alone, with no delegate and no guard, then the host's ordinary git commands and what
 * Claude Code and VS Code run on their own: each must leave its marker. So a marker
 * missing after a delegate's job (jail-routes-*.test.ts) means dl stopped it, not that the
 * host never ran it. (The other routes plant what a host obeys without these steps running
 * it: an agent definition, a memory file, another agent's or editor's configuration.)
 */

/** The control over the reaching routes whose index is `slice` modulo `of` (from 1); slice 1 also runs dl's own. */
export function controlSlice(slice: number, of: number): void {
  let id: Identity;
  const ran = new Set<string>();
  const mine = [...ROUTES.entries()].filter(([n, r]) => r.reaches && n % of === slice - 1);

  /**
   * Each layout built once; a route gets a copy (a linked worktree's admin files hold absolute paths: built anew).
   * `last`: no later route of the slice takes this layout, so the template itself is moved into place, not copied
   * (a later test that wants the layout builds it again).
   */
  function freshLayout(layout: LayoutId, root: string, last = false): void {
    const template = join(id.base, `template-${layout}`);
    if (layout === "worktree") {
      buildLayouts({ id, root }, layout);
      return;
    }
    if (!existsSync(template)) {
      mkdirSync(template);
      id.own(template);
      buildLayouts({ id, root: template }, layout);
    }
    if (last) {
      renameSync(template, root);
      return;
    }
    const r = id.run(["cp", "-a", `${template}/.`, root]);
    if (r.code !== 0) throw new Error(`copy of layout ${layout}: ${r.stderr}`);
  }

  /** One route alone in a fresh copy of its layout (routes of one layout would undo each other unguarded). */
  function plantAlone(r: (typeof ROUTES)[number], n: number, last: boolean): void {
    const root = join(id.base, `proj-${n}`);
    const markers = join(id.base, `markers-${n}`);
    mkdirSync(root);
    mkdirSync(markers);
    id.own(id.base);
    freshLayout(r.layout, root, last);
    id.run(["sh", "-c", `${prelude(markers)}\n${r.sh}\n`], { cwd: join(root, LAYOUTS[r.layout].workdir) });
    // The host's steps up to the one that runs the route (the marker answers; the rest cannot undo it).
    const seen = () => existsSync(join(markers, r.id));
    // Claude Code's hooks, .mcp.json servers, VS Code's tasks: for the routes of their classes.
    // A tool-config route is run by those, so they come first there: the git commands before
    // them (every step in every checkout, `submodule status` alone ~20 processes) were most
    // of the control's time. The order cannot make a route pass that does not reach: a
    // marker only appears if some host step ran the payload.
    const tools = r.klass === "tool-config" || r.klass === "hook-manager";
    if (r.klass === "tool-config") hostTools(id, root, r.layout, seen);
    hostGitCommands(id, root, r.layout, [r], seen);
    if (tools) hostTools(id, root, r.layout, seen);
    if (readdirSync(markers).includes(r.id)) ran.add(r.id);
  }

  beforeAll(() => {
    id = makeIdentity(identityNames()[0]!, `atk-control${slice}`);
    for (const [i, [n, r]] of mine.entries())
      plantAlone(r, n, !mine.slice(i + 1).some(([, o]) => o.layout === r.layout));
  }, 400_000);
  afterAll(() => id?.cleanup());

  test(`unguarded, the host runs what each route plants (slice ${slice} of ${of})`, () => {
    const missing = mine.filter(([, r]) => !ran.has(r.id)).map(([, r]) => r.id);
    const reaching = ROUTES.filter((r) => r.reaches).length;
    console.log(
      `control ${slice}/${of}: unguarded, ${ran.size} of its ${mine.length} routes marked reaches ran on the host (${reaching} of the ${ROUTES.length} routes reach)`,
    );
    expect(mine.length).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  });

  if (slice !== 1) return;
  /** dl's own third tier of agent definitions, put in the tree by the settings: unguarded, the next delegation obeys what a job plants there. */
  test("unguarded, dl loads the agent definitions a job plants in a DELEGATE_LOCAL_AGENTS_DIR inside the workdir", async () => {
    const root = join(id.base, "proj-agents");
    const markers = join(id.base, "markers-agents");
    mkdirSync(root);
    mkdirSync(markers);
    freshLayout("repo", root);
    const agents = join(root, AGENTS_IN_TREE);
    mkdirSync(agents, { recursive: true });
    writeFileSync(join(agents, "coder.md"), "---\nname: coder\ndescription: c\ntools: Read, Write, Edit\n---\nCode.\n");
    id.own(id.base);
    const route = ROUTES.find((r) => r.id === "dl-agents-dir")!;
    id.run(["sh", "-c", `${prelude(markers)}\n${route.sh}\n`], { cwd: join(root, LAYOUTS.repo.workdir) });
    const [command, ...args] = id.argv([id.dl, "serve"]);
    const env = id.env({
      DELEGATE_LOCAL_AGENTS_DIR: agents,
      DELEGATE_LOCAL_URL: "http://127.0.0.1:9",
      DELEGATE_LOCAL_KEY: "k",
    });
    const client = new Client({ name: "control-agents", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: command!, args, env, cwd: id.base, stderr: "pipe" }));
    try {
      const r = (await client.callTool({ name: "list_local_agents", arguments: { workdir: join(root, "repo") } })) as {
        structuredContent?: { agents?: { name: string; tools?: string[] }[] };
      };
      const got = Object.fromEntries((r.structuredContent?.agents ?? []).map((a) => [a.name, a.tools ?? []]));
      expect({ coder: got.coder, planted: got.planted }).toEqual({ coder: ["run_bash"], planted: ["run_bash"] });
    } finally {
      await client.close();
    }
  }, 60_000);

  /** A route of dl's own reads planted alone in a fresh repo layout with its folders in the tree; the layout root. */
  function plantDlRead(routeId: string): string {
    const root = join(id.base, `proj-${routeId}`);
    const markers = join(id.base, `markers-${routeId}`);
    mkdirSync(root);
    mkdirSync(markers);
    freshLayout("repo", root);
    plantDlReads(root);
    id.own(id.base);
    const route = ROUTES.find((r) => r.id === routeId)!;
    const r = id.run(["sh", "-c", `${prelude(markers)}\n${route.sh}\n`], { cwd: join(root, LAYOUTS.repo.workdir) });
    if (r.code !== 0) throw new Error(`planting ${routeId}: ${r.stderr}`);
    return root;
  }

  /** The settings file and dsh models file an XDG_CONFIG_HOME in the tree places: unguarded, dl's next start obeys the job's. */
  test("unguarded, dl takes its settings from the settings file a job plants under an XDG_CONFIG_HOME inside the workdir", () => {
    const root = plantDlRead("dl-settings-file");
    const r = id.run([id.dl, "status", "--json"], { env: id.env({ XDG_CONFIG_HOME: join(root, XDG_IN_TREE) }) });
    expect(r.stdout).toContain('"model":"planted-by-job"');
  }, 60_000);

  /** CODEX_HOME in the tree: the real Codex CLI reads the config.toml a job planted (an MCP server it starts: sh <the job's script>). */
  test("unguarded, the real Codex CLI loads the config.toml a job plants in a CODEX_HOME inside the workdir", () => {
    const root = plantDlRead("dl-codex-home");
    const home = join(root, CODEX_HOME_IN_TREE);
    const r = id.run([CODEX_NPM_BIN, "mcp", "list"], { env: id.env({ CODEX_HOME: home }) });
    expect({ code: r.code, listed: r.stdout.match(/^planted\s+sh\s+(\S+)/m)?.[1] }).toEqual({
      code: 0,
      listed: join(root, "repo/.payloads/dl-codex-home.sh"),
    });
  }, 60_000);
}
