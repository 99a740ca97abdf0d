import type * as ClientSdk from '@modelcontextprotocol/client';
import type * as StdioSdk from '@modelcontextprotocol/client/stdio';
import { McpClientError } from './mcp-client.error.js';
import { MISSING_SDK } from './mcp-client.messages.js';

export type McpSdk = typeof ClientSdk;
export type McpStdioSdk = typeof StdioSdk;

let sdk: Promise<McpSdk> | undefined;
let stdio: Promise<McpStdioSdk> | undefined;

/** Loads the official client once, when the first client connects: it is an optional peer. */
export function loadSdk(client: string): Promise<McpSdk> {
  sdk ??= import('@modelcontextprotocol/client').catch((error: unknown) => {
    sdk = undefined;
    throw new McpClientError(
      'config',
      client,
      MISSING_SDK(client, error instanceof Error ? error.message : String(error)),
    );
  });
  return sdk;
}

export function loadStdioSdk(client: string): Promise<McpStdioSdk> {
  stdio ??= import('@modelcontextprotocol/client/stdio').catch((error: unknown) => {
    stdio = undefined;
    throw new McpClientError(
      'config',
      client,
      MISSING_SDK(client, error instanceof Error ? error.message : String(error)),
    );
  });
  return stdio;
}
