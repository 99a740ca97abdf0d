import { Observable, defer, switchMap } from 'rxjs';
import type { McpContext } from './context.js';
import { McpError } from './errors.js';
import { ErrorCode } from './json-rpc.js';
import type { JsonObject } from './mcp-types.js';
import { changeNotificationMethod, type McpChangeEvent, type McpNotificationBus } from './notification-bus.js';
import { META_SUBSCRIPTION_ID } from './versions.js';

interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

/** Bounds and checks of the URIs a `subscriptions/listen` filter may name. */
export interface ListenOptions {
  /** `limits.subscriptionsPerSession`: most URIs in `resourceSubscriptions`. */
  maxResourceSubscriptions: number;
  /**
   * Throws the `resources/read` error for a URI no resource or template serves; the function it
   * returns runs the resource's guards for the caller.
   */
  checkUri?: (uri: string) => (ctx: McpContext) => Promise<void>;
}

function parseFilter(
  params: JsonObject,
  options: ListenOptions,
): { filter: ListenFilter; guards: Array<(ctx: McpContext) => Promise<void>> } {
  const raw = params.notifications;
  if (raw === undefined) return { filter: {}, guards: [] };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new McpError(
      ErrorCode.InvalidParams,
      'subscriptions/listen: "notifications" must be an object such as { "toolsListChanged": true }.',
    );
  }
  const input = raw as JsonObject;
  const filter: ListenFilter = {};
  for (const key of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const) {
    if (input[key] === true) filter[key] = true;
  }
  const uris = input.resourceSubscriptions;
  if (uris !== undefined) {
    if (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string')) {
      throw new McpError(
        ErrorCode.InvalidParams,
        'subscriptions/listen: "resourceSubscriptions" must be an array of URI strings.',
      );
    }
    const unique = [...new Set(uris as string[])];
    if (unique.length > options.maxResourceSubscriptions) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `subscriptions/listen: "resourceSubscriptions" names ${unique.length} URIs; the limit is ${options.maxResourceSubscriptions} (limits.subscriptionsPerSession). Listen to fewer resources, or raise McpModule's limits.subscriptionsPerSession.`,
      );
    }
    const guards = options.checkUri ? unique.map((uri) => options.checkUri!(uri)) : [];
    filter.resourceSubscriptions = unique;
    return { filter, guards };
  }
  return { filter, guards: [] };
}

function wants(filter: ListenFilter, event: McpChangeEvent): boolean {
  if (event.type === 'resource-updated') return filter.resourceSubscriptions?.includes(event.uri) ?? false;
  if (event.kind === 'tools') return filter.toolsListChanged === true;
  if (event.kind === 'prompts') return filter.promptsListChanged === true;
  return filter.resourcesListChanged === true;
}

/**
 * `subscriptions/listen` (2026-07-28): a long-lived stream that first acknowledges the filter it
 * will honour, then carries only the change notifications the filter asked for, each tagged with
 * the subscription id (the listen request's id). It ends when the client disconnects, or with a
 * `complete` result when the server shuts the subscription down.
 */
export function listen(
  params: JsonObject,
  ctx: McpContext,
  bus: McpNotificationBus,
  shutdown$: Observable<void>,
  options: ListenOptions,
): Observable<JsonObject> {
  const { filter, guards } = parseFilter(params, options);
  const tag = { [META_SUBSCRIPTION_ID]: ctx.requestId };
  // What a caller may not read it may not watch: every named resource's guards pass before the
  // acknowledgement, one after another so a refusal stops the rest.
  const admitted = defer(() => guards.reduce((chain, guard) => chain.then(() => guard(ctx)), Promise.resolve()));
  const stream = new Observable<JsonObject>((subscriber) => {
    ctx.notify('notifications/subscriptions/acknowledged', { notifications: filter, _meta: tag });
    const unsubscribe = bus.subscribe((event) => {
      if (!wants(filter, event)) return;
      const params: JsonObject = event.type === 'resource-updated' ? { uri: event.uri, _meta: tag } : { _meta: tag };
      ctx.notify(changeNotificationMethod(event), params);
    });
    const stop = shutdown$.subscribe(() => {
      subscriber.next({ _meta: tag });
      subscriber.complete();
    });
    return () => {
      unsubscribe();
      stop.unsubscribe();
    };
  });
  return guards.length ? admitted.pipe(switchMap(() => stream)) : stream;
}
