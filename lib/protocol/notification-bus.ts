import { Subject } from 'rxjs';
import type { JsonObject } from './mcp-types.js';

/** Which capability a runtime toggle is about, by its registry key (name, URI or URI template). */
export type McpToggleTarget = 'tool' | 'prompt' | 'resource' | 'resourceTemplate';

/**
 * The whole runtime state of one capability after an enable, disable or update: absolute, so
 * that applying it twice, or on an instance that missed earlier ones, gives the same result.
 */
export interface McpToggleState {
  target: McpToggleTarget;
  key: string;
  enabled: boolean;
  /** Descriptor fields replacing the declared ones. */
  overrides: { title?: string; description?: string; annotations?: JsonObject };
  /** The registry that made the change, which skips its own echo. */
  origin: string;
}

/** A change that clients may be told about. */
export type McpChangeEvent =
  | { type: 'list-changed'; kind: 'tools' | 'prompts' | 'resources'; toggle?: McpToggleState }
  | { type: 'resource-updated'; uri: string };

/**
 * The bus event of a registry change (`McpRegistryChange`): what every stream hears of it. A list
 * change drops which item changed (clients re-list); a resource update keeps its URI.
 */
export function changeEventOf(
  change:
    { kind: 'tools' | 'prompts' | 'resources'; toggle?: McpToggleState } | { kind: 'resource-updated'; uri: string },
): McpChangeEvent {
  if (change.kind === 'resource-updated') return { type: 'resource-updated', uri: change.uri };
  // A toggle rides on the list change, so every instance applies it before its streams hear of it.
  return change.toggle
    ? { type: 'list-changed', kind: change.kind, toggle: change.toggle }
    : { type: 'list-changed', kind: change.kind };
}

/**
 * Fans change events out to every stream that may want them: legacy GET streams and modern
 * `subscriptions/listen` streams. The default stays in this process; a shared implementation
 * (Redis) reaches the streams of every instance.
 *
 * @publicApi
 */
export interface McpNotificationBus {
  publish(event: McpChangeEvent): void | Promise<void>;
  /** Returns an unsubscribe function. */
  subscribe(listener: (event: McpChangeEvent) => void): () => void;
  close?(): void | Promise<void>;
}

export class InProcessNotificationBus implements McpNotificationBus {
  private readonly subject = new Subject<McpChangeEvent>();

  publish(event: McpChangeEvent): void {
    this.subject.next(event);
  }

  subscribe(listener: (event: McpChangeEvent) => void): () => void {
    const subscription = this.subject.subscribe(listener);
    return () => subscription.unsubscribe();
  }

  close(): void {
    this.subject.complete();
  }
}

/** The notification method a change becomes. */
export function changeNotificationMethod(event: McpChangeEvent): string {
  return event.type === 'resource-updated'
    ? 'notifications/resources/updated'
    : `notifications/${event.kind}/list_changed`;
}
