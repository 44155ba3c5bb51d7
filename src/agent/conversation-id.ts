/**
 * A conversation id: `cv-` and 20 hex digits. Apart from conversation.ts so the input
 * schema can check `continue_from` without loading anything else. The shape is also what
 * makes an id safe to use as a file name.
 */
export const CONVERSATION_ID = /^cv-[0-9a-f]{20}$/;
