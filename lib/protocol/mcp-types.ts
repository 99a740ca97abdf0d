import type { ProtocolEra } from './versions.js';

export type JsonObject = Record<string, unknown>;

/** Icon metadata (2025-11-25+). `src` should be an https or data: URL served from your origin. */
export interface McpIcon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: 'light' | 'dark';
}

/** Behaviour hints for clients. Clients treat them as untrusted. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface Implementation {
  name: string;
  version: string;
  title?: string;
  description?: string;
  websiteUrl?: string;
  icons?: McpIcon[];
}

export interface TextContent {
  type: 'text';
  text: string;
  annotations?: JsonObject;
  _meta?: JsonObject;
}
export interface ImageContent {
  type: 'image';
  data: string;
  mimeType: string;
  annotations?: JsonObject;
  _meta?: JsonObject;
}
export interface AudioContent {
  type: 'audio';
  data: string;
  mimeType: string;
  annotations?: JsonObject;
  _meta?: JsonObject;
}
export interface ResourceLinkContent {
  type: 'resource_link';
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: JsonObject;
  _meta?: JsonObject;
}
export interface EmbeddedResourceContent {
  type: 'resource';
  resource: { uri: string; mimeType?: string; text?: string; blob?: string; _meta?: JsonObject };
  annotations?: JsonObject;
  _meta?: JsonObject;
}
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLinkContent | EmbeddedResourceContent;

/** The result of `tools/call`. */
export interface CallToolResult {
  content: ContentBlock[];
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: JsonObject;
  [key: string]: unknown;
}

/** What `tools/list` advertises for one tool. */
export interface ToolDescriptor {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonObject;
  outputSchema?: JsonObject;
  annotations?: ToolAnnotations;
  icons?: McpIcon[];
  _meta?: JsonObject;
  /** 2025-11-25: whether the tool runs as a task. */
  execution?: { taskSupport: 'optional' | 'required' };
}

/** Who is calling and over which protocol revision. */
export interface McpClientInfo {
  era: ProtocolEra;
  protocolVersion: string;
  clientInfo?: Implementation;
  capabilities: JsonObject;
}

/** Cache hints for modern (2026-07-28) cacheable results. */
export interface CacheHint {
  ttlMs: number;
  cacheScope: 'public' | 'private';
}

export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
