import { type EnvField, envDefaults, envObject, type Leaf } from "./config-fields.ts";

/**
 * How config.ts's one tree of settings is read. A leaf (config-fields.ts) names its
 * variable, default and rule; a `caps(...)` group is one provider's job caps; every other
 * node is a plain object of nodes. The tree's shape is the Config's shape, so a setting
 * has one name in code (its path) and one in the environment (its variable).
 */

type AnyLeaf = Leaf<unknown, unknown>;
type CapsLeaves = {
  readonly maxConcurrent: Leaf<number>;
  /** Absent: the provider has no per-project cap (it equals the global one). */
  readonly maxPerProject?: Leaf<number>;
  readonly maxQueue: Leaf<number>;
  /** Absent: no gap between launches. */
  readonly staggerS?: Leaf<number>;
};
type CapsNode = { readonly kind: "caps"; readonly leaves: CapsLeaves };
export type Tree = { readonly [key: string]: AnyLeaf | CapsNode | Tree };

/** The values a tree parses to: each leaf its value, each caps group a JobCaps. */
export type Values<N> =
  N extends EnvField<infer T, infer D>
    ? T | D
    : N extends CapsNode
      ? JobCaps
      : { -readonly [K in keyof N]: Values<N[K]> };

/**
 * A provider's job caps, shared by every server on its state dir: jobs running at once in
 * all and per project, jobs that may wait beyond the free slots, and the least gap between
 * two launches. A `caps(...)` group of SETTINGS parses to one.
 */
export type JobCaps = { maxConcurrent: number; maxPerProject: number; maxQueue: number; staggerS: number };

/** One provider's job caps, shared by every server on its state dir. */
export function caps(leaves: CapsLeaves): CapsNode {
  return { kind: "caps", leaves };
}

const isLeaf = (n: unknown): n is AnyLeaf => typeof n === "object" && n !== null && "rule" in n && "env" in n;
const isCaps = (n: unknown): n is CapsNode => typeof n === "object" && n !== null && "kind" in n && n.kind === "caps";

/** Every leaf of the tree, in the order it is written. */
export function leavesOf(tree: Tree): AnyLeaf[] {
  return Object.values(tree).flatMap((n): AnyLeaf[] => {
    if (isLeaf(n)) return [n];
    if (isCaps(n)) return Object.values(n.leaves) as AnyLeaf[];
    return leavesOf(n);
  });
}

function capsGroupsOf(tree: Tree): CapsLeaves[] {
  return Object.values(tree).flatMap((n): CapsLeaves[] => (isLeaf(n) ? [] : isCaps(n) ? [n.leaves] : capsGroupsOf(n)));
}

/** A setting that is not allowed: the variable and what completes "expected …". */
export type Refusal = { variable: string; expected: string };

type ByVariable = Record<string, unknown>;

function parseLeaves(leaves: readonly AnyLeaf[], env: ByVariable): ByVariable | Refusal {
  const fields = Object.fromEntries(leaves.map((l) => [l.env, l as EnvField<unknown, unknown>]));
  const parsed = envObject(fields, env).safeParse(env);
  if (parsed.success) return parsed.data as ByVariable;
  const issue = parsed.error.issues[0]!;
  return { variable: String(issue.path[0] ?? "environment"), expected: issue.message };
}

/** A per-project cap above the global cap could never be reached: refuse it by name. */
function capsProblem(groups: readonly CapsLeaves[], v: ByVariable): Refusal | undefined {
  for (const { maxPerProject, maxConcurrent } of groups) {
    if (maxPerProject && (v[maxPerProject.env] as number) > (v[maxConcurrent.env] as number)) {
      const expected = `a value > 0 and <= ${maxConcurrent.env} (${v[maxConcurrent.env]})`;
      return { variable: maxPerProject.env, expected };
    }
  }
  return undefined;
}

/** Leaves behind a condition (Bifrost's): parsed when it holds, their defaults otherwise. */
function conditional(leaves: readonly AnyLeaf[], v: ByVariable, env: ByVariable): ByVariable | Refusal {
  const chosen = leaves.filter((l) => l.only && v[l.only.env] === l.only.is);
  const parsed = parseLeaves(chosen, env);
  if ("variable" in parsed) return parsed;
  const missing = chosen.find((l) => l.required && parsed[l.env] === undefined);
  if (missing) return { variable: missing.env, expected: missing.required! };
  return { ...envDefaults(Object.fromEntries(leaves.map((l) => [l.env, l]))), ...parsed };
}

function valuesOf(tree: Tree, v: ByVariable): unknown {
  const out: Record<string, unknown> = {};
  for (const [key, n] of Object.entries(tree)) {
    if (isLeaf(n)) out[key] = v[n.env];
    else if (isCaps(n)) {
      const c = n.leaves;
      const maxConcurrent = v[c.maxConcurrent.env] as number;
      out[key] = {
        maxConcurrent,
        maxPerProject: c.maxPerProject ? (v[c.maxPerProject.env] as number) : maxConcurrent,
        maxQueue: v[c.maxQueue.env] as number,
        staggerS: c.staggerS ? (v[c.staggerS.env] as number) : 0,
      } satisfies JobCaps;
    } else out[key] = valuesOf(n, v);
  }
  return out;
}

/**
 * The tree's values for one tidied environment (config-fields.ts tidyEnv), or the first
 * setting refused: a leaf's rule, then the caps groups, then the conditional leaves.
 */
export function readTree<T extends Tree>(
  tree: T,
  env: ByVariable,
): { ok: true; values: Values<T> } | { ok: false; refusal: Refusal } {
  const leaves = leavesOf(tree);
  const main = parseLeaves(
    leaves.filter((l) => !l.only),
    env,
  );
  if ("variable" in main) return { ok: false, refusal: main as Refusal };
  const refused = capsProblem(capsGroupsOf(tree), main);
  if (refused) return { ok: false, refusal: refused };
  const chosen = conditional(
    leaves.filter((l) => l.only),
    main,
    env,
  );
  if ("variable" in chosen) return { ok: false, refusal: chosen as Refusal };
  return { ok: true, values: valuesOf(tree, { ...main, ...chosen }) as Values<T> };
}
