export const CODEX_CLOUD_WARNING =
  "A cloud model on the user's ChatGPT plan: never send personal or health data. Done only means the CLI exited 0: run the project's tests before merging.";
