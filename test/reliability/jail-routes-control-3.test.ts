import { controlSlice } from "./attack-control.ts";

controlSlice(3);
