import { Subject } from 'rxjs';

/** A change that clients may be told about. */
export type McpChangeEvent =
  | { type: 'list-changed'; kind: 'tools' | 'prompts' | 'resources' }
  | { type: 'resource-updated'; uri: string };

/**
 * The bus event of a registry change (`McpRegistryChange`): what every stream hears of it. A list
 * change drops which item changed (clients re-list); a resource update keeps its URI.
 */
export function changeEventOf(change: { kind: 'tools' | 'prompts' | 'resources' } | { kind: 'resource-updated'; uri: string }): McpChangeEvent {
  return change.kind === 'resource-updated' ? { type: 'resource-updated', uri: change.uri } : { type: 'list-changed', kind: change.kind };
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
  return event.type === 'resource-updated' ? 'notifications/resources/updated' : `notifications/${event.kind}/list_changed`;
}
