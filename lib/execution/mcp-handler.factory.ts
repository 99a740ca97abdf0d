import { Injectable, Optional, type Type } from '@nestjs/common';
import { ContextIdFactory, ExternalContextCreator, ModuleRef, type ContextId } from '@nestjs/core';
import { Injector } from '@nestjs/core/injector/injector.js';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { defer, mergeMap } from 'rxjs';
import { Observable, catchError, defaultIfEmpty, filter, isObservable, of } from 'rxjs';
import { isEmission } from '../protocol/emission.js';
import { defineCallParam } from '../decorators/params.decorators.js';
import { MCP_PARAM_ARGS_METADATA, McpParamtype } from '../common/mcp.constants.js';
import type { McpCall } from '../protocol/mcp-call.js';
import { MCP_CONTEXT_TYPE } from './mcp-execution-context.js';
import { McpExceptionFilters } from './mcp-exception-filters.js';
import {
  Deliberate,
  EXCEPTION_FILTERS_METADATA,
  LIST_PROBE_METHOD,
  asHandler,
  isDeliberate,
  paramsFactory,
  toToolError,
  untilAborted,
} from './mcp-pipeline-parts.js';
import { McpPolicyGate, type McpPolicyTarget } from './mcp-policy-gate.js';
import { emptyPipeline, globalEnhancersOf, type PipelineTarget } from './mcp-empty-pipeline.js';
import { requiredScopesOf } from '../auth/require-scopes.decorator.js';
import * as messages from '../common/mcp.messages.js';

/**
 * Runs a call through the capability's pipeline. `admit`, when the capability has policies,
 * counts a call against its rate limits ahead of running it (a task call, before its task
 * exists): the invoker then counts that call's context no more.
 */
export type McpInvoker = ((call: McpCall) => Observable<unknown>) & { admit?: (call: McpCall) => Promise<void> };

/** Runs a capability's guards for a call, without the handler; rejects with what a refusing guard raised. */
export type McpGuardCheck = (call: McpCall) => Promise<void>;

/** A runtime-registered handler wired into the Nest pipeline, with what authorization needs. */
export interface McpRuntimeHandler {
  invoke: McpInvoker;
  /** The carrier class and method, whose decorators hold the handler's policies. */
  policyHost?: { owner: Function; method: Function };
  authorize?: McpGuardCheck;
  requiredScopes?: string[];
}

const RUNTIME_METHOD = 'handle';
const GUARDS_METADATA = '__guards__';
/** Enhancer metadata keys whose class entries Nest resolves through the host's module. */
const ENHANCER_KEYS: Record<string, string> = {
  [GUARDS_METADATA]: 'guard',
  __interceptors__: 'interceptor',
  [EXCEPTION_FILTERS_METADATA]: 'exception filter',
  __pipes__: 'pipe',
};

/**
 * Wraps provider methods with Nest's ExternalContextCreator (the way @nestjs/graphql wraps
 * resolvers) so that guards, interceptors, pipes and exception filters apply to every call.
 */
@Injectable()
export class McpHandlerFactory {
  private readonly injector = new Injector();
  private readonly filters: McpExceptionFilters;

  constructor(
    private readonly externalContextCreator: ExternalContextCreator,
    private readonly moduleRef: ModuleRef,
    @Optional() private readonly policies?: McpPolicyGate,
  ) {
    this.filters = new McpExceptionFilters(externalContextCreator);
  }

  /** The invoker behind the capability's own policies (concurrency, rate limits), counted by `target.key`. */
  gated(target: McpPolicyTarget, invoke: McpInvoker): McpInvoker {
    return this.policies ? this.policies.gate(target, invoke) : invoke;
  }

  /**
   * For a request-scoped provider (or one that depends on one): a fresh instance per MCP call,
   * resolved in the context of the HTTP request, so `@Inject(REQUEST)` gets that request and
   * durable providers follow the app's ContextIdStrategy.
   */
  createScoped(wrapper: InstanceWrapper, methodName: string): McpInvoker {
    return (call) =>
      defer(async () => {
        const request = (call.context.request as object | undefined) ?? { mcpCall: call };
        const contextId = ContextIdFactory.getByRequest(request);
        if (!(contextId as ContextId & { payload?: unknown }).payload) {
          this.moduleRef.registerRequestByContextId(request, contextId);
        }
        const instance = await this.injector.loadPerContext(
          wrapper.instance,
          wrapper.host!,
          wrapper.host!.providers,
          contextId,
          wrapper,
        );
        return this.create(instance as object, methodName, contextId, wrapper.id);
      }).pipe(mergeMap((invoke) => invoke(call)));
  }

  create(instance: object, methodName: string, contextId?: ContextId, inquirerId?: string): McpInvoker {
    const original = (instance as Record<string, (...args: unknown[]) => unknown>)[methodName];
    const owner = Object.getPrototypeOf(instance).constructor as object;
    const callIndex = this.ensureCallParam(instance, owner, methodName, original);
    return this.wrap(
      instance,
      methodName,
      original,
      (self, params) => original.apply(self, params.slice(0, callIndex)),
      callIndex,
      contextId,
      inquirerId,
    );
  }

  /**
   * A handler added at runtime (McpRegistry.addTool and friends), run through the same path as
   * a decorated method: global, "class" and method guards, interceptors, pipes and filters. It
   * gets a host of its own, on whose method the `decorators` (UseGuards, UseInterceptors,
   * UseFilters, RequireScopes, SetMetadata-based ones) are applied as on a provider method.
   * Enhancer classes are resolved from the application (a runtime host belongs to no module, so
   * Nest itself would silently skip them); one the application does not provide is refused.
   */
  createRuntime(
    run: (call: McpCall) => unknown,
    decorators: readonly MethodDecorator[] | undefined,
    site: string,
  ): McpRuntimeHandler {
    class McpRuntimeCapability {}
    const prototype = McpRuntimeCapability.prototype as unknown as Record<string, unknown>;
    const carrier = function (): void {};
    Object.defineProperty(prototype, RUNTIME_METHOD, { value: carrier, writable: true, configurable: true });
    for (const decorator of decorators ?? []) {
      const descriptor = Object.getOwnPropertyDescriptor(prototype, RUNTIME_METHOD)!;
      const replaced = decorator(prototype, RUNTIME_METHOD, descriptor);
      if (replaced) Object.defineProperty(prototype, RUNTIME_METHOD, replaced);
    }
    const method = prototype[RUNTIME_METHOD] as (...args: unknown[]) => unknown;
    // A compiled method has its parameter types; the carrier declares it has none, so that an app's
    // global ValidationPipe (Nest 12) does not warn that it cannot tell them.
    Reflect.defineMetadata('design:paramtypes', [], prototype, RUNTIME_METHOD);
    this.resolveEnhancers(method, site);
    const instance = new McpRuntimeCapability();
    const callIndex = this.ensureCallParam(instance, McpRuntimeCapability, RUNTIME_METHOD, carrier);
    return {
      invoke: this.wrap(
        instance,
        RUNTIME_METHOD,
        method,
        (_self, params) => run(params[callIndex] as McpCall),
        callIndex,
      ),
      policyHost: { owner: McpRuntimeCapability, method },
      authorize: this.createGuardCheck(instance, RUNTIME_METHOD),
      requiredScopes: requiredScopesOf(McpRuntimeCapability, method),
    };
  }

  private resolveEnhancers(method: Function, site: string): void {
    for (const [key, kind] of Object.entries(ENHANCER_KEYS)) {
      const entries = Reflect.getMetadata(key, method) as unknown[] | undefined;
      if (!entries?.length) continue;
      const resolved = entries.map((entry) => {
        if (typeof entry !== 'function') return entry;
        try {
          return this.moduleRef.get(entry as Type<unknown>, { strict: false });
        } catch {
          throw new Error(messages.RUNTIME_ENHANCER_UNKNOWN(site, kind, (entry as Function).name));
        }
      });
      Reflect.defineMetadata(key, resolved, method);
    }
  }

  private wrap(
    instance: object,
    methodName: string,
    original: Function,
    run: (self: unknown, params: unknown[]) => unknown,
    callIndex: number,
    contextId?: ContextId,
    inquirerId?: string,
  ): McpInvoker {
    // Nest collapses an Observable result into its last value, so the callback handed to it
    // routes progress/log emissions to the context, and stops the handler's Observable when the
    // call is cancelled (teardown runs at once). The module's own deliberate outcomes (tool and
    // protocol errors, input requests) travel as values, so Nest does not log them as crashes;
    // HttpExceptions and everything else still reach exception filters.
    const callback = function (this: unknown, ...params: unknown[]): unknown {
      const call = params[callIndex] as McpCall;
      let result: unknown;
      try {
        result = run(this, params);
      } catch (error) {
        if (isDeliberate(error)) return new Deliberate(error);
        throw error;
      }
      if (result instanceof Promise) {
        return result.catch((error: unknown) => {
          if (isDeliberate(error)) return new Deliberate(error);
          throw error;
        });
      }
      if (!isObservable(result)) return result;
      return result.pipe(
        filter((value) => {
          if (!isEmission(value)) return true;
          value.apply(call.context);
          return false;
        }),
        untilAborted(call.context.signal),
        // Nest takes the last value with lastValueFrom, which rejects an empty Observable with
        // EmptyError (logged by its ExceptionsHandler); the module's own reading of a handler that
        // emits nothing is an undefined result (lastOf), so Nest gets that.
        defaultIfEmpty(undefined),
        catchError((error: unknown) => {
          if (isDeliberate(error)) return of(new Deliberate(error));
          throw error;
        }),
      );
    };
    // Filters run apart (McpExceptionFilters), so that an app filter written for HTTP only cannot
    // turn a tool's HttpException into an internal error.
    const target: PipelineTarget =
      emptyPipeline(this.externalContextCreator, instance, instance.constructor, original, methodName, callback) ??
      this.externalContextCreator.create(
        instance,
        asHandler(original as (...args: unknown[]) => unknown, callback),
        methodName,
        MCP_PARAM_ARGS_METADATA,
        paramsFactory,
        contextId,
        inquirerId,
        { guards: true, interceptors: true, filters: false },
        MCP_CONTEXT_TYPE,
      );
    const runFilters = this.filters.runner(instance, original, contextId, inquirerId);
    return (call) =>
      new Observable<unknown>((subscriber) => {
        const work = target(call.context.request, undefined, call);
        // Nothing stops the app's method once started: its call's in-flight slot waits for it.
        call.context.holdWork?.(work);
        const settle = (value: unknown): void => {
          if (value instanceof Deliberate) return subscriber.error(value.error);
          subscriber.next(value);
          subscriber.complete();
        };
        const fail = (error: unknown): void => subscriber.error(toToolError(error));
        work.then(settle, (error: unknown) => runFilters(error, call).then(settle, fail));
      });
  }

  /**
   * A guard check: runs the method's guards (method, class and global) against a call context
   * (a list's, or a completion's), without pipes, interceptors or the method itself. Undefined
   * when no guard applies, so unguarded capabilities cost nothing at list time.
   */
  createGuardCheck(instance: object, methodName: string): McpGuardCheck | undefined {
    const original = (instance as Record<string, (...args: unknown[]) => unknown>)[methodName];
    const owner = Object.getPrototypeOf(instance).constructor as object;
    if (!this.hasGuards(owner, original)) return undefined;
    const probe = asHandler(original, function (): boolean {
      return true;
    });
    // A method name without parameter metadata keeps pipes (a global ValidationPipe) out.
    const target = this.externalContextCreator.create(
      instance,
      probe,
      LIST_PROBE_METHOD,
      MCP_PARAM_ARGS_METADATA,
      paramsFactory,
      undefined,
      undefined,
      { guards: true, interceptors: false, filters: false },
      MCP_CONTEXT_TYPE,
    );
    return (call) => target(call.context.request, undefined, call).then(() => undefined);
  }

  private hasGuards(owner: object, method: Function): boolean {
    const local =
      (Reflect.getMetadata(GUARDS_METADATA, method)?.length ?? 0) +
      (Reflect.getMetadata(GUARDS_METADATA, owner)?.length ?? 0);
    if (local > 0) return true;
    const config = globalEnhancersOf(this.externalContextCreator);
    if (!config) return true;
    return config.getGlobalGuards().length + (config.getGlobalRequestGuards?.().length ?? 0) > 0;
  }

  /** The hidden parameter sits after every declared one, so user parameters keep their indices. */
  private ensureCallParam(
    instance: object,
    owner: object,
    methodName: string,
    original: (...args: unknown[]) => unknown,
  ): number {
    const metadata: Record<string, { index: number }> =
      Reflect.getMetadata(MCP_PARAM_ARGS_METADATA, owner, methodName) ?? {};
    const existing = Object.keys(metadata).find((key) => key.startsWith(`${McpParamtype.CALL}:`));
    if (existing) return metadata[existing].index;
    const paramtypes: unknown[] = Reflect.getMetadata('design:paramtypes', instance, methodName) ?? [];
    const maxIndex = Math.max(-1, ...Object.values(metadata).map((m) => m.index));
    const index = Math.max(paramtypes.length, original.length, maxIndex + 1);
    defineCallParam(Object.getPrototypeOf(instance), methodName, index);
    return index;
  }
}
