import { join } from "node:path";

/**
 * A build step: the MCP SDK's types.js builds about 160 zod schemas when it is imported,
 * one for every message of the protocol, and a server answering `initialize` uses a few
 * dozen of them. Building them all took about a quarter of `dl serve`'s start and 10 MB
 * of its memory (bench/startup). This rewrites each top-level `const …Schema = <expr>;`
 * of that one file into a stand-in that builds the schema the first time anything
 * touches it, and forwards every operation to it from then on.
 *
 * The rewrite is strict about the shape it expects: if the SDK's file stops looking like
 * this (no schemas found, or a declaration it cannot delimit), the build fails instead of
 * shipping a binary whose protocol types changed behind its back.
 */

/** The stand-in (src/lazy-schema.ts, the same one dl's own tool schemas use), imported by the rewritten module. */
const LAZY_IMPORT = `import { lazySchema as __dlLazySchema } from ${JSON.stringify(join(import.meta.dir, "..", "src", "lazy-schema.ts"))};`;

/** A top-level statement starts at column 0 with a letter, `(` or a comment; `]`, `}` or `)` there closes the one before. */
const STATEMENT_START = /^[A-Za-z_(/]/;
const SCHEMA_DECL = /^((?:export )?const ([A-Za-z0-9_]+Schema) = )([\s\S]*?);\s*$/;

export type LazyRewrite = { code: string; schemas: number };

/** Rewrites the schema declarations of the SDK's types.js; throws when the file is not shaped as expected. */
export function lazySchemas(source: string): LazyRewrite {
  const lines = source.split("\n");
  const statements: string[] = [];
  for (const line of lines) {
    if (statements.length === 0 || STATEMENT_START.test(line)) statements.push(line);
    else statements[statements.length - 1] += `\n${line}`;
  }
  let schemas = 0;
  const out = statements.map((statement) => {
    if (!/^(?:export )?const [A-Za-z0-9_]+Schema\b/.test(statement)) return statement;
    const m = SCHEMA_DECL.exec(statement);
    if (!m) throw new Error(`lazy-sdk-schemas: cannot delimit ${statement.slice(0, 80)}`);
    schemas++;
    return `${m[1]}/* @__PURE__ */ __dlLazySchema(() => (${m[3]}));`;
  });
  if (schemas < 100)
    throw new Error(`lazy-sdk-schemas: found ${schemas} schemas in the SDK's types.js, expected over 100`);
  return { code: `${LAZY_IMPORT}\n${out.join("\n")}`, schemas };
}

/** The Bun plugin: applies `lazySchemas` to @modelcontextprotocol/sdk's types.js. */
export const LAZY_SDK_SCHEMAS: Bun.BunPlugin = {
  name: "dl-lazy-sdk-schemas",
  setup(build) {
    build.onLoad({ filter: /@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]esm[\\/]types\.js$/ }, async (args) => ({
      contents: lazySchemas(await Bun.file(args.path).text()).code,
      loader: "js",
    }));
  },
};
