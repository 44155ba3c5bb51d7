import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eachStore } from "../../src/store/each-store.ts";
import { JobStore } from "../../src/store/jobs.ts";
import { DB_FILE } from "../../src/store/types.ts";
import { tempDir } from "../helpers/dl.ts";

/** A store with one job, one never created, one whose file is not a database. */
function stores() {
  const root = tempDir("dl-each-store");
  const good = join(root, "good");
  const s = JobStore.open(good);
  s.insertMany([
    { id: "a", provider: "test", project: "p", workdir: "/w", workspace_root: "/w", task: "t", created_at: 1 },
  ]);
  s.close();
  const broken = join(root, "broken");
  mkdirSync(broken);
  writeFileSync(join(broken, DB_FILE), "not a database, not at all".repeat(200));
  return [
    { provider: "test", stateDir: good },
    { provider: "test", stateDir: join(root, "never") },
    { provider: "test", stateDir: broken },
  ];
}

describe("eachStore: the one loop over the known stores", () => {
  test("each store is read, absent, or named with why it could not be read", () => {
    const visits = eachStore(stores(), (st) => st.listRecent(10).map((r) => r.id), { readonly: true });
    expect(visits.map((v) => ("value" in v ? v.value : "absent" in v ? "absent" : "error"))).toEqual([
      ["a"],
      "absent",
      "error",
    ]);
    const err = visits[2]!;
    expect("error" in err && err.error.length > 0).toBe(true);
  });

  test("an async visitor keeps its store open until it settles, one store at a time", async () => {
    let open = 0;
    let most = 0;
    const visits = await eachStore(stores(), async (st) => {
      most = Math.max(most, ++open);
      await Bun.sleep(1);
      const n = st.listRecent(10).length; // still open after the await
      open--;
      return n;
    });
    expect(visits.map((v) => ("value" in v ? v.value : null))).toEqual([1, null, null]);
    expect(most).toBe(1);
  });

  test("a visitor that throws is that store's error; the next store is still read", () => {
    const [good] = stores();
    let seen = 0;
    const visits = eachStore([good!, good!], (_st, s) => {
      if (seen++ === 0) throw new Error("boom");
      return s.stateDir;
    });
    expect("error" in visits[0]! && visits[0].error).toBe("Error");
    expect("value" in visits[1]! && visits[1].value).toBe(good!.stateDir);
  });
});
