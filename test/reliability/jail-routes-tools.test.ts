import { attackSuite } from "./attack-suite.ts";

/** The attack suite for the agent's own write_file/edit_file (an agent with `tools: Read, Write, Edit`), as root and as an ordinary user. */
attackSuite("tools");
