import "./cli/zod-jitless.ts";
import { runCli } from "./cli/main.ts";

// No top-level await: the binary is compiled to bytecode, which needs a plain script body.
void runCli(process.argv.slice(2));
