import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeModel, reply, startFakeModel } from "../fixture/fake-model.ts";
import { requireBinary, tempDir } from "../helpers/dl.ts";
import { connectTaskDl } from "../helpers/task-session.ts";
import { skipBwrap } from "../sandbox/jail-env.ts";

/**
 * Through dist/dl started with umask 000: a jailed run_bash changes a 0600 package.json's
 * tool key; dl puts the key back and the file keeps its 0600 (it came back 0666 before).
 */
const KEY = "sk-put-back-mode-key";
let fake: FakeModel;
let agentsDir: string;
beforeAll(async () => {
  fake = await startFakeModel({ apiKey: KEY });
  agentsDir = tempDir("agents");
  writeFileSync(join(agentsDir, "helper.md"), "---\nname: helper\ndescription: h\n---\nHelp.\n");
});
afterAll(async () => {
  await fake?.stop();
});

describe.skipIf(skipBwrap)("a package.json put back after a jailed command", () => {
  test("keeps its 0600 under umask 000", async () => {
    const workdir = tempDir("put-back-mode");
    const pkg = join(workdir, "package.json");
    writeFileSync(pkg, '{\n  "name": "x",\n  "prettier": {}\n}\n');
    chmodSync(pkg, 0o600);
    const env = {
      DELEGATE_LOCAL_URL: fake.anthropicUrl,
      DELEGATE_LOCAL_KEY: KEY,
      DELEGATE_LOCAL_AGENTS_DIR: agentsDir,
      DELEGATE_LOCAL_MODEL: "local-test-model",
      DELEGATE_RUN_BASH_SANDBOX: "1",
    };
    const s = await connectTaskDl(env, { command: ["sh", "-c", 'umask 000; exec "$0" "$@"', requireBinary()] });
    try {
      const evil = `printf '{\\n  "name": "x",\\n  "prettier": "./evil.cjs"\\n}\\n' > package.json; echo END`;
      fake.script(reply.tool("run_bash", { command: evil }), reply.text("done"));
      const res = await s.client.callTool({
        name: "delegate_to_local_agent",
        arguments: { agent_name: "helper", task: "run it", workdir },
      });
      expect(res.isError).toBeFalsy();
      expect(JSON.stringify(fake.requests[1]?.body)).toContain("prettier (restored)");
    } finally {
      await s.close();
    }
    expect(JSON.parse(readFileSync(pkg, "utf8")).prettier).toEqual({});
    expect(statSync(pkg).mode & 0o777).toBe(0o600);
  }, 60_000);
});
