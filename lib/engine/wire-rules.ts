import type { McpContext, RequestEnvelope } from '../protocol/context.js';
import { decodeHeaderValue } from '../protocol/header-value.js';
import {
  ErrorCode,
  failure,
  type JsonRpcFailure,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
} from '../protocol/json-rpc.js';
import { readModernMeta } from '../protocol/modern-meta.js';
import { isObject, type McpDispatcher } from '../protocol/dispatcher.js';
import { META_PROTOCOL_VERSION, isModernVersionString } from '../protocol/versions.js';
import { declaredMethod } from '../protocol/methods.js';
import type { McpTransportFacts } from './sink.js';

/** A message is 2026-07-28 when its `_meta` names a version, or its version header is a modern one. */
export function isModernMessage(message: JsonRpcRequest | JsonRpcNotification, facts: McpTransportFacts): boolean {
  const meta = message.params?._meta;
  if (isObject(meta) && META_PROTOCOL_VERSION in meta) return true;
  const headerVersion = facts.header('mcp-protocol-version');
  return headerVersion !== undefined && isModernVersionString(headerVersion);
}

/**
 * The facts of a 2026-07-28 message, from its `_meta`; where the Streamable HTTP header rules
 * apply, the headers that repeat the body (version, method, name, tool headers) must agree with it.
 */
export function modernFacts(
  facts: McpTransportFacts,
  message: JsonRpcRequest | JsonRpcNotification,
  id: JsonRpcId | null,
): RequestEnvelope | JsonRpcFailure {
  const meta = readModernMeta(
    message.params,
    id,
    facts.headerRules ? (version) => versionHeaderProblem(facts, version, id) : undefined,
  );
  if ('error' in meta) return meta;
  return {
    era: 'modern',
    protocolVersion: meta.protocolVersion,
    capabilities: meta.capabilities,
    clientInfo: meta.clientInfo,
    transportRequest: facts.transportRequest,
    clientAddress: () => facts.clientAddress,
    logLevel: meta.logLevel,
    principal: facts.principal?.id,
    auth: facts.principal,
  };
}

/**
 * The header rules of a modern request, where they apply (Streamable HTTP): the headers that
 * repeat the body (method, name, tool headers) must agree with it. Reads the call's target
 * through the call object, so the catalog is asked once.
 */
export function modernHeaderProblem(
  server: McpDispatcher,
  facts: McpTransportFacts,
  call: McpContext,
  message: JsonRpcRequest,
): JsonRpcFailure | undefined {
  return facts.headerRules ? headerProblem(server, facts, message, call) : undefined;
}

function versionHeaderProblem(
  facts: McpTransportFacts,
  version: string,
  id: JsonRpcId | null,
): JsonRpcFailure | undefined {
  const headerVersion = facts.header('mcp-protocol-version');
  if (headerVersion === undefined) {
    return failure(
      id,
      ErrorCode.HeaderMismatch,
      `Header mismatch: the MCP-Protocol-Version header is required and must equal "${version}".`,
    );
  }
  if (headerVersion !== version) {
    return failure(
      id,
      ErrorCode.HeaderMismatch,
      `Header mismatch: MCP-Protocol-Version header "${headerVersion}" does not match the body's protocol version "${version}".`,
    );
  }
  return undefined;
}

function headerProblem(
  server: McpDispatcher,
  facts: McpTransportFacts,
  message: JsonRpcRequest,
  call: McpContext,
): JsonRpcFailure | undefined {
  const id = message.id;
  const methodHeader = facts.header('mcp-method');
  if (methodHeader === undefined || methodHeader.trim() !== message.method) {
    return failure(
      id,
      ErrorCode.HeaderMismatch,
      methodHeader === undefined
        ? `Header mismatch: the Mcp-Method header is required and must equal "${message.method}".`
        : `Header mismatch: Mcp-Method header "${methodHeader}" does not match the body method "${message.method}".`,
    );
  }
  if (!server.hasMethod('modern', message.method)) return server.methodNotFoundResponse(id, message.method, 'modern');
  const declared = declaredMethod(message.method);
  const nameField = declared?.nameHeader ? declared.target?.param : undefined;
  if (nameField !== undefined) {
    const problem = nameHeaderProblem(facts, message.params?.[nameField], nameField);
    if (problem) return failure(id, ErrorCode.HeaderMismatch, problem);
  }
  const problem = server.checkHeaders(message.method, message.params ?? {}, (name) => facts.header(name), call, facts);
  if (problem) return failure(id, ErrorCode.HeaderMismatch, problem);
  return undefined;
}

function nameHeaderProblem(facts: McpTransportFacts, bodyValue: unknown, field: 'name' | 'uri'): string | undefined {
  const raw = facts.header('mcp-name');
  if (raw === undefined) return `Header mismatch: the Mcp-Name header is required and must equal params.${field}.`;
  const decoded = decodeHeaderValue(raw);
  if (!decoded.ok)
    return 'Header mismatch: the Mcp-Name header has invalid characters or a malformed =?base64?…?= value.';
  if (typeof bodyValue !== 'string' || decoded.value !== bodyValue.trim()) {
    return `Header mismatch: Mcp-Name header "${decoded.value}" does not match params.${field}.`;
  }
  return undefined;
}

/** On the modern era some JSON-RPC errors carry a mandated HTTP status. */
export function modernErrorStatus(code: number): number {
  switch (code) {
    case ErrorCode.MethodNotFound:
      return 404;
    case ErrorCode.HeaderMismatch:
    case ErrorCode.MissingRequiredClientCapability:
    case ErrorCode.UnsupportedProtocolVersion:
      return 400;
    default:
      return 200;
  }
}
