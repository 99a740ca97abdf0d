import type { ContentBlock, JsonObject, McpIcon } from './mcp-types.js';

/*
 * What a prompt is on the wire: its descriptor in `prompts/list` and its rendered messages. The
 * catalog, the clients and the prompts pack (lib/prompts) share them.
 */

/** One argument as `prompts/list` advertises it. */
export interface PromptArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
}

/** What `prompts/list` advertises for one prompt. */
export interface PromptDescriptor {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
  icons?: McpIcon[];
  _meta?: JsonObject;
}

/**
 * One message of a rendered prompt.
 *
 * @publicApi
 */
export interface PromptMessage {
  role: 'user' | 'assistant';
  content: ContentBlock;
}

/** The result of `prompts/get`. @publicApi */
export interface GetPromptResult {
  description?: string;
  messages: PromptMessage[];
  _meta?: JsonObject;
}

const toContent = (content: string | ContentBlock): ContentBlock =>
  typeof content === 'string' ? { type: 'text', text: content } : content;

/**
 * Builders for prompt messages. Content is a string (text) or any `Content.*` item (image,
 * audio, embedded resource, resource link).
 *
 * @example
 * return [
 *   PromptMessage.user(`Review this ${language} code:`),
 *   PromptMessage.user(Content.resource({ uri, mimeType: 'text/plain', text: code })),
 *   PromptMessage.assistant('Sure: here is what I see.'),
 * ];
 * @publicApi
 */
export const PromptMessage = {
  user(content: string | ContentBlock): PromptMessage {
    return { role: 'user', content: toContent(content) };
  },
  assistant(content: string | ContentBlock): PromptMessage {
    return { role: 'assistant', content: toContent(content) };
  },
} as const;
