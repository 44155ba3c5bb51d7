export const CODEX_CLOUD_WARNING =
  "Codex is a cloud model on the user's ChatGPT plan: never send PHI or personal data. `done` only means the CLI exited 0 — run the project's tests in the worktree before merging.";
