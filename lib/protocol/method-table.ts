import { ErrorCode, failure, type JsonRpcFailure, type JsonRpcId } from './json-rpc.js';
import type { McpCaller, McpMethodDeclaration, McpMethodSpec, MethodEntry, MethodPreparer } from './methods.js';
import type { JsonObject } from './mcp-types.js';
import { truncate } from './values.js';
import { LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS, type ProtocolEra } from './versions.js';

/**
 * The method table of one server: each declared method with what the features attached to it
 * (handlers per era, target look-up, scopes, header checks, caller preparation), and the rules
 * read from it before a request runs. The dispatcher is built on it; the engine and the wire rules
 * ask it.
 */
export class McpMethodTable {
  protected readonly methods = new Map<string, MethodEntry>();
  /** Every distinct caller preparation a method declared; empty, a body pays one length check. */
  private readonly preparers: MethodPreparer[] = [];

  /**
   * Attaches a feature's handler (and its target look-up, scopes, header checks and caller
   * preparation) to a declared method, for every era the declaration names or the `eras` given.
   * Scope and header rules are shared by the eras; each era's handler is its own.
   */
  define(method: McpMethodDeclaration, spec: McpMethodSpec): void {
    let entry = this.methods.get(method.name);
    if (!entry) this.methods.set(method.name, (entry = { declaration: method }));
    if (spec.handler) for (const era of spec.eras ?? method.eras) entry[era] = spec.handler;
    if (spec.find) entry.find = spec.find;
    if (spec.scopes) entry.scopes = spec.scopes;
    if (spec.headers) entry.headers = spec.headers;
    if (spec.prepare) {
      entry.prepare = spec.prepare;
      if (!this.preparers.includes(spec.prepare)) this.preparers.push(spec.prepare);
    }
  }

  /**
   * Settles what depends on the caller (its tool sets) before the scope and header checks of its
   * body (one message or a batch) read it: each preparation a method of the body declares runs
   * once. Undefined when there is nothing to wait for; never rejects.
   */
  prepareCaller(caller: McpCaller, body: unknown): void | Promise<void> {
    if (this.preparers.length === 0) return undefined;
    const due = new Set<MethodPreparer>();
    for (const message of Array.isArray(body) ? body : [body]) {
      const method =
        typeof message === 'object' && message !== null ? (message as { method?: unknown }).method : undefined;
      const prepare = typeof method === 'string' ? this.methods.get(method)?.prepare : undefined;
      if (prepare) due.add(prepare);
    }
    const pending: Promise<void>[] = [];
    for (const prepare of due) {
      const outcome = prepare(caller);
      if (outcome) pending.push(outcome);
    }
    if (pending.length === 0) return undefined;
    return pending.length === 1 ? pending[0] : Promise.all(pending).then(() => undefined);
  }

  /**
   * The capability a request targets, looked up in the catalog once per call: with the call
   * object, the first asker (the scope check, the header rules or the handler) looks it up and the
   * others read it from the call. Undefined when nothing by that name is served.
   */
  targetOf(method: string, params: JsonObject | undefined, ctx?: { target?: unknown }, caller?: McpCaller): unknown {
    if (ctx?.target !== undefined) return ctx.target ?? undefined;
    const find = this.methods.get(method)?.find;
    const target = find ? (find(params ?? {}, caller) ?? null) : null;
    if (ctx) ctx.target = target;
    return target ?? undefined;
  }

  hasMethod(era: ProtocolEra, method: string): boolean {
    return this.methods.get(method)?.[era] !== undefined;
  }

  /**
   * Checks the `Mcp-Param-*` headers of a modern request against its params, for the method's
   * {@link HeaderCheck}. Returns a message on mismatch.
   */
  checkHeaders(
    method: string,
    params: JsonObject,
    getHeader: (name: string) => string | undefined,
    ctx?: { target?: unknown },
    caller?: McpCaller,
  ): string | undefined {
    const check = this.methods.get(method)?.headers;
    return check ? check(params, getHeader, this.targetOf(method, params, ctx, caller), caller) : undefined;
  }

  /**
   * OAuth scopes the target of a request needs, for the transport to enforce before it runs: the
   * tool of `tools/call`, the resource or template serving the URI of `resources/read` and
   * `resources/subscribe`, the prompt of `prompts/get`, the ref's prompt or template of
   * `completion/complete`. The single source every entry path asks.
   */
  requiredScopes(
    method: string,
    params: JsonObject | undefined,
    ctx?: { target?: unknown },
    caller?: McpCaller,
  ): readonly string[] | undefined {
    const resolve = this.methods.get(method)?.scopes;
    return resolve ? resolve(params ?? {}, this.targetOf(method, params, ctx, caller), caller) : undefined;
  }

  methodNotFoundResponse(id: JsonRpcId, method: string, era: ProtocolEra): JsonRpcFailure {
    const hint =
      this.hasMethod(era === 'modern' ? 'legacy' : 'modern', method) || method === 'initialize'
        ? era === 'modern'
          ? ` "${truncate(method)}" exists only in the legacy protocol (${LEGACY_PROTOCOL_VERSIONS.join(', ')}), which opens with initialize.`
          : ` "${truncate(method)}" exists only in protocol ${MODERN_PROTOCOL_VERSIONS.join(', ')}.`
        : '';
    return failure(id, ErrorCode.MethodNotFound, `Method not found: "${truncate(method)}".${hint}`);
  }
}
