import { Observable, type Subscription } from 'rxjs';

/** What {@link lastOf} reports: the last value (undefined when none came), or the error. */
export interface LastValueObserver<T> {
  value(last: T | undefined, emitted: boolean): void;
  error(error: unknown): void;
}

/**
 * The one place the last value of a handler's Observable is taken (a handler's result is the
 * last value it emits): the dispatcher, the tool runner and tasks all go through it. Returns the
 * subscription; unsubscribing cancels the handler.
 */
export function lastOf<T>(source: Observable<T>, observer: LastValueObserver<T>): Subscription {
  return source.subscribe(new LastValueTap(observer));
}

/** The subscriber side of {@link lastOf}: one object, not three closures, since every call goes through it. */
class LastValueTap<T> {
  private last: T | undefined = undefined;
  private emitted = false;

  constructor(private readonly observer: LastValueObserver<T>) {}

  next(value: T): void {
    this.last = value;
    this.emitted = true;
  }

  error(error: unknown): void {
    this.observer.error(error);
  }

  complete(): void {
    this.observer.value(this.last, this.emitted);
  }
}

/** The last value as a Promise (undefined when none came); rejects with the Observable's error. */
export function lastValueOf<T>(source: Observable<T>): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    lastOf(source, { value: resolve, error: reject });
  });
}

/** Emits the source's last value (or `undefined` when it produced none), then completes. */
export function lastValue<T>(source: Observable<T>): Observable<T | undefined> {
  return new Observable<T | undefined>((subscriber) =>
    lastOf(source, {
      value: (last) => {
        subscriber.next(last);
        subscriber.complete();
      },
      error: (error) => subscriber.error(error),
    }),
  );
}
