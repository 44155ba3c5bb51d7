import { attackSuite } from "./attack-suite.ts";

/** The attack suite for a hostile agy in the real jail (submit_gemini), as root and as an ordinary user. */
attackSuite("gemini");
