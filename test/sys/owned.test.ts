import { describe, expect, test } from "bun:test";
import { chmodSync, chownSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { newConversationId } from "../../src/agent/conversation.ts";
import { ConversationStore } from "../../src/agent/conversation-store.ts";
import { JobStore } from "../../src/store/jobs.ts";
import { spawnDetached } from "../../src/sys/detached.ts";
import { tryLock } from "../../src/sys/flock.ts";
import { tempDir } from "../helpers/dl.ts";

/**
 * Files dl opens in its own state dir are refused when another user owns them, whatever
 * their mode (sys/owned.ts): a store and its -wal (read-write and read-only), a lock or
 * slot file, a job's supervisor.log, a conversation. As root, with files given to nobody.
 */
const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;

function nobodys(path: string, text = ""): string {
  writeFileSync(path, text);
  chownSync(path, NOBODY, NOBODY);
  chmodSync(path, 0o600);
  return path;
}

const REFUSED = `belongs to another user (uid ${NOBODY}), not this user (uid 0)`;

describe.skipIf(!isRoot)("a file of another user in dl's state", () => {
  test("a planted jobs.sqlite or -wal: the store is refused, read-write and read-only, and left as it was", () => {
    for (const name of ["jobs.sqlite", "jobs.sqlite-wal"]) {
      const dir = tempDir("owned-store");
      chmodSync(dir, 0o700);
      const planted = nobodys(join(dir, name));
      // Read-write first: with a planted -wal, that open made jobs.sqlite (this user's) before refusing.
      for (const readonly of [false, true]) {
        expect(() => JobStore.open(dir, { readonly })).toThrow(`${planted} ${REFUSED}`);
      }
      expect(readFileSync(planted, "utf8")).toBe("");
    }
  });

  test("a lock file of another user is refused, not locked", () => {
    const lock = nobodys(join(tempDir("owned-lock"), "slot-0.lock"));
    expect(() => tryLock(lock)).toThrow(`${lock} ${REFUSED}`);
  });

  test("a supervisor.log of another user is not appended to: nothing starts", () => {
    const dir = tempDir("owned-log");
    const log = nobodys(join(dir, "supervisor.log"));
    const marker = join(dir, "ran");
    expect(() =>
      spawnDetached({ argv: ["/bin/sh", "-c", `echo x; touch ${marker}`], env: {}, cwd: dir, logFile: log }),
    ).toThrow(`${log} ${REFUSED}`);
    expect(readFileSync(log, "utf8")).toBe("");
  });

  test("a conversation file of another user is not continued", () => {
    const dir = join(tempDir("owned-conv"), "conversations");
    mkdirSync(dir, { mode: 0o700 });
    const id = newConversationId();
    const c = { v: 1, id, agent: "helper", workdir: "/w", model: "m", prompt_turns: 25, created_at: 1, updated_at: 1 };
    const file = nobodys(join(dir, `${id}.json`), JSON.stringify({ ...c, messages: [{ role: "user", content: "t" }] }));
    expect(() => new ConversationStore(dir).load(id)).toThrow(`${file} ${REFUSED}`);
  });
});
