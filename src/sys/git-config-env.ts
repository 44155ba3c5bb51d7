/**
 * The variables that tell git where its configuration lives or add to it (git-config(1),
 * ENVIRONMENT): what the user's own git reads besides the repository's files. dl's own
 * questions to git (what it reads, where the hooks are) must see the same configuration,
 * or a hooks path or driver set there is missed; a delegate never gets them (a value may
 * hold a credential).
 */
export const GIT_CONFIG_SOURCE = /^GIT_CONFIG_(GLOBAL|SYSTEM|NOSYSTEM|COUNT|KEY_\d+|VALUE_\d+|PARAMETERS)$/;
