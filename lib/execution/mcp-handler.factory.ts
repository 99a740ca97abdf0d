import { HttpException, Injectable, Logger, Optional, type Type } from '@nestjs/common';
import { ContextIdFactory, ExternalContextCreator, ModuleRef, type ContextId } from '@nestjs/core';
import { Injector } from '@nestjs/core/injector/injector.js';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { defer, mergeMap } from 'rxjs';
import { Observable, catchError, defaultIfEmpty, filter, isObservable, of, type MonoTypeOperatorFunction } from 'rxjs';
import { isInputRequiredSignal } from '../protocol/interaction.js';
import { isEmission } from '../protocol/emission.js';
import { defineCallParam } from '../decorators/params.decorators.js';
import { MCP_PARAM_ARGS_METADATA, McpParamtype } from '../common/mcp.constants.js';
import { McpError, ToolError, httpExceptionMessage } from '../protocol/errors.js';
import { McpCancelledError } from '../protocol/dispatcher.js';
import type { McpCall } from '../protocol/mcp-call.js';
import { MCP_CONTEXT_TYPE } from './mcp-execution-context.js';
import { McpParamsFactory } from './mcp-params.factory.js';
import { McpPolicyGate, type McpPolicyTarget } from './mcp-policy-gate.js';
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

const LIST_PROBE_METHOD = '__mcpListProbe__';
const RUNTIME_METHOD = 'handle';
const GUARDS_METADATA = '__guards__';
// Nest's own metadata keys (@UseFilters, @Catch), stable across Nest 11 and 12.
const EXCEPTION_FILTERS_METADATA = '__exceptionFilters__';
const FILTER_CATCH_EXCEPTIONS = '__filterCatchExceptions__';
/** Enhancer metadata keys whose class entries Nest resolves through the host's module. */
const ENHANCER_KEYS: Record<string, string> = {
  [GUARDS_METADATA]: 'guard',
  __interceptors__: 'interceptor',
  [EXCEPTION_FILTERS_METADATA]: 'exception filter',
  __pipes__: 'pipe',
};

const paramsFactory = new McpParamsFactory();

/**
 * Wraps provider methods with Nest's ExternalContextCreator (the way @nestjs/graphql wraps
 * resolvers) so that guards, interceptors, pipes and exception filters apply to every call.
 */
@Injectable()
export class McpHandlerFactory {
  private readonly injector = new Injector();
  private readonly logger = new Logger('McpModule');
  /** Filter classes already reported as HTTP-only: the warning is said once per class. */
  private readonly warnedFilters = new Set<string>();

  constructor(
    private readonly externalContextCreator: ExternalContextCreator,
    private readonly moduleRef: ModuleRef,
    @Optional() private readonly policies?: McpPolicyGate,
  ) {}

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
    // Filters run apart (below), so that an app filter written for HTTP only cannot turn a tool's
    // HttpException into an internal error.
    const target = this.externalContextCreator.create(
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
    const runFilters = this.createFilterRunner(instance, original, contextId, inquirerId);
    return (call) =>
      new Observable<unknown>((subscriber) => {
        const work = target(call.context.request, undefined, call);
        // Nothing stops the app's method once started: its call's in-flight slot waits for it.
        call.context.holdWork?.(work);
        work
          .catch((error: unknown) => runFilters(error, call))
          .then(
            (value: unknown) => {
              if (value instanceof Deliberate) return subscriber.error(value.error);
              subscriber.next(value);
              subscriber.complete();
            },
            (error: unknown) => subscriber.error(toToolError(error)),
          );
      });
  }

  /**
   * Runs the exception filters that apply to the method (method, class and global, chosen the way
   * Nest chooses them) on an error of the call. A filter's return value is the call's result; a
   * rethrown error is the call's error. A filter that fails on the MCP context itself (typically
   * `host.switchToHttp().getResponse().status(...)`, where there is no response) is reported once
   * per filter class, and the original exception stands, so an HttpException still reaches the
   * model as its message.
   */
  private createFilterRunner(
    instance: object,
    original: Function,
    contextId: ContextId | undefined,
    inquirerId: string | undefined,
  ): (error: unknown, call: McpCall) => Promise<unknown> {
    const pending = new WeakMap<McpCall, unknown>();
    const rethrow = asHandler(
      original as (...args: unknown[]) => unknown,
      function (_request: unknown, _response: unknown, call: McpCall): never {
        throw pending.get(call);
      },
    );
    // A method name without parameter metadata keeps pipes out, as for the list probe.
    const run = this.externalContextCreator.create(
      instance,
      rethrow,
      LIST_PROBE_METHOD,
      MCP_PARAM_ARGS_METADATA,
      paramsFactory,
      contextId,
      inquirerId,
      { guards: false, interceptors: false, filters: true },
      MCP_CONTEXT_TYPE,
    );
    const owner = Object.getPrototypeOf(instance).constructor as Function;
    return async (error, call) => {
      pending.set(call, error);
      try {
        return await run(call.context.request, undefined, call);
      } catch (outcome) {
        if (outcome === error || isDeliberate(outcome) || outcome instanceof HttpException) throw outcome;
        this.warnHttpOnlyFilter(this.selectFilterName(owner, original, error), call, error, outcome);
        throw error;
      } finally {
        pending.delete(call);
      }
    };
  }

  private warnHttpOnlyFilter(filterName: string, call: McpCall, error: unknown, failure: unknown): void {
    if (this.warnedFilters.has(filterName)) return;
    this.warnedFilters.add(filterName);
    const what = error instanceof Error ? error.constructor.name : typeof error;
    const why = failure instanceof Error ? failure.message : String(failure);
    this.logger.warn(
      `Exception filter ${filterName} failed while handling a ${what} from MCP ${call.method} "${call.name}" (${why}): ` +
        `it assumes an HTTP context, and MCP calls have none (no response object). The call's own error was used instead` +
        `${error instanceof HttpException ? " (the model gets the exception's message as an isError result)" : ''}. ` +
        `Make ${filterName} MCP-aware: at the top of catch(), \`if (host.getType<string>() === 'mcp') throw exception;\` ` +
        `(or return a CallToolResult there to shape the result). This warning is logged once per filter class.`,
    );
  }

  /** The filter Nest picks for the error: method filters first, then class, then global ones (last declared first). */
  private selectFilterName(owner: Function, method: Function, error: unknown): string {
    const config = (
      this.externalContextCreator as unknown as {
        container?: {
          applicationConfig?: { getGlobalFilters(): unknown[]; getGlobalRequestFilters?(): { metatype?: unknown }[] };
        };
      }
    ).container?.applicationConfig;
    const candidates = [
      ...(config?.getGlobalFilters() ?? []),
      ...(config?.getGlobalRequestFilters?.() ?? []).map((wrapper) => wrapper.metatype),
      ...((Reflect.getMetadata(EXCEPTION_FILTERS_METADATA, owner) as unknown[] | undefined) ?? []),
      ...((Reflect.getMetadata(EXCEPTION_FILTERS_METADATA, method) as unknown[] | undefined) ?? []),
    ].reverse();
    const chosen = candidates.find((candidate) => {
      if (!candidate) return false;
      const ctor = (typeof candidate === 'function' ? candidate : (candidate as object).constructor) as Function;
      const types =
        ((Reflect.getMetadata(FILTER_CATCH_EXCEPTIONS, ctor.prototype) ??
          Reflect.getMetadata(FILTER_CATCH_EXCEPTIONS, ctor)) as Function[] | undefined) ?? [];
      return types.length === 0 || types.some((type) => error instanceof type);
    });
    if (!chosen) return 'an exception filter';
    return (
      (typeof chosen === 'function' ? chosen.name : (chosen as object).constructor.name) ||
      'an anonymous exception filter'
    );
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
    const config = (
      this.externalContextCreator as unknown as {
        container?: { applicationConfig?: { getGlobalGuards(): unknown[]; getGlobalRequestGuards?(): unknown[] } };
      }
    ).container?.applicationConfig;
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

/**
 * The function Nest calls in place of the method, and what `context.getHandler()` returns to
 * guards and interceptors: a proxy of the tool's own method (its `name`, `length` and metadata,
 * so audit logs and `Reflector.get(KEY, context.getHandler())` see the tool), that runs `invoke`.
 */
function asHandler<T extends Function>(original: T, invoke: Function): T {
  const handler = new Proxy(original, {
    apply: (_target, thisArg, args: unknown[]) => Reflect.apply(invoke, thisArg, args),
  });
  // reflect-metadata keys its storage by object identity, so the proxy gets its own copy.
  for (const key of Reflect.getMetadataKeys(original))
    Reflect.defineMetadata(key, Reflect.getMetadata(key, original), handler);
  return handler;
}

/**
 * Mirrors the source until the call's signal aborts, then tears the source down and fails with
 * why (a cancellation, or the policy's ToolError on a timeout). Failing, not completing: an empty
 * completion reached Nest's lastValueFrom as EmptyError and was logged as a crash on every
 * client that dropped its stream; the reason is a deliberate outcome, which Nest does not log.
 */
function untilAborted<T>(signal: AbortSignal): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      const stop = (): void => subscriber.error(isDeliberate(signal.reason) ? signal.reason : new McpCancelledError());
      if (signal.aborted) return stop();
      signal.addEventListener('abort', stop, { once: true });
      const inner = source.subscribe(subscriber);
      return () => {
        signal.removeEventListener('abort', stop);
        inner.unsubscribe();
      };
    });
}

class Deliberate {
  constructor(readonly error: unknown) {}
}

/**
 * The module's own outcomes: tool and protocol errors, input requests, and cancellation (a client
 * that disconnects is no failure, and logging each one would let any caller flood the log).
 */
function isDeliberate(error: unknown): boolean {
  return (
    error instanceof ToolError ||
    error instanceof McpError ||
    error instanceof McpCancelledError ||
    isInputRequiredSignal(error)
  );
}

/** Nest HTTP exceptions are messages meant for the caller: the model sees them as tool errors. */
function toToolError(error: unknown): unknown {
  if (error instanceof McpError || error instanceof ToolError) return error;
  if (error instanceof HttpException) return new ToolError(httpExceptionMessage(error)!);
  return error;
}
