import "./cli/zod-jitless.ts";
import { commandLine } from "./cli/invoked-as.ts";
import { runCli } from "./cli/main.ts";

// No top-level await: the binary is compiled to bytecode, which needs a plain script body.
void runCli(commandLine(process.argv0, process.argv.slice(2)));
