/**
 * Replaced at build time by build.ts (`define`); running from source reports "dev".
 */
declare const DL_VERSION: string | undefined;
export const VERSION: string = typeof DL_VERSION === "string" ? DL_VERSION : "0.0.0-dev";
