import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";

/**
 * The SDK's server builds an Ajv instance (meta-schemas, formats) in its constructor, for
 * validating elicitation answers, which dl never asks for. Building it on first use keeps
 * that cost out of every `dl serve` start (measured: a few ms and about 1 MB).
 */
export function lazyJsonSchemaValidator(): jsonSchemaValidator {
  let ajv: AjvJsonSchemaValidator | undefined;
  return {
    getValidator(schema) {
      ajv ??= new AjvJsonSchemaValidator();
      return ajv.getValidator(schema);
    },
  };
}
