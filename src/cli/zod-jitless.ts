import { z } from "zod";

/**
 * Imported first by main.ts, before any zod schema exists (zod reads the flag when a
 * schema is built). zod's default compiles a fast parser for each object schema with
 * `new Function` on first use; in the bytecode-compiled binary that source is compiled
 * again at run time on every start, and `dl serve` parses each of its schemas only a
 * handful of times (the MCP SDK's, the config's), so interpreting them is cheaper.
 * Measured with bench/startup: about 10 ms less to answer `initialize`.
 */
z.config({ jitless: true });
