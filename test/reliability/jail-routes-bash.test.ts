import { attackSuite } from "./attack-suite.ts";

/** The attack suite for an agent's run_bash with DELEGATE_RUN_BASH_SANDBOX=1, as root and as an ordinary user. */
attackSuite("bash");
