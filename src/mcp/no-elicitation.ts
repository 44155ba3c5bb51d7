import type { jsonSchemaValidator } from "@modelcontextprotocol/server";

/**
 * The SDK's server validates elicitation answers against a JSON Schema, and unless told
 * otherwise builds an Ajv instance for that in its constructor (meta-schemas, formats: a
 * few ms and about 1 MB on every `dl serve` start). dl never asks the client for
 * elicitation, so it hands the SDK this validator instead.
 */
export const noElicitationValidator: jsonSchemaValidator = {
  getValidator() {
    throw new Error("dl does not request elicitation, so it has no JSON Schema validator for the answers");
  },
};
