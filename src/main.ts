import { runCli } from "./cli/main.ts";

await runCli(process.argv.slice(2));
