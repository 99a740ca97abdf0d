/**
 * Server-Sent Events parsing for e2e tests that read raw MCP responses.
 *
 * Unlike a browser `EventSource`, events whose data is empty are kept: the Streamable HTTP
 * "priming" event (an `id` with empty data) is exactly what some tests need to see.
 */

/** One parsed SSE event. `data` is the parsed JSON when the payload is JSON, else the raw text. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: unknown;
  /** The payload exactly as received (multi-line data joined with `\n`). */
  rawData: string;
  retry?: number;
}

/** Incremental SSE parser: feed it text chunks, collect complete events. */
export class SseParser {
  private buffer = '';
  private dataLines: string[] = [];
  private id: string | undefined;
  private eventName: string | undefined;
  private retry: number | undefined;
  private sawField = false;

  /** Parses `chunk` and returns the events it completed. */
  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const events: SseEvent[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (!match) break;
      // A lone `\r` at the end of a chunk may be the first half of `\r\n`; wait for more input.
      if (match[0] === '\r' && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const event = this.processLine(line);
      if (event) events.push(event);
    }
    return events;
  }

  /** Flushes a final event that was not followed by a blank line (stream ended). */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.buffer.length > 0) {
      const event = this.processLine(this.buffer);
      this.buffer = '';
      if (event) events.push(event);
    }
    const last = this.dispatch();
    if (last) events.push(last);
    return events;
  }

  private processLine(line: string): SseEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.dataLines.push(value);
        break;
      case 'id':
        this.id = value;
        break;
      case 'event':
        this.eventName = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        return undefined;
    }
    this.sawField = true;
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    if (!this.sawField) return undefined;
    const rawData = this.dataLines.join('\n');
    const event: SseEvent = { data: parseJsonOrText(rawData), rawData };
    if (this.id !== undefined) event.id = this.id;
    if (this.eventName !== undefined) event.event = this.eventName;
    if (this.retry !== undefined) event.retry = this.retry;
    this.dataLines = [];
    this.id = undefined;
    this.eventName = undefined;
    this.retry = undefined;
    this.sawField = false;
    return event;
  }
}

function parseJsonOrText(text: string): unknown {
  if (text.trim() === '') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Parses a complete SSE body into events. */
export function parseSse(text: string): SseEvent[] {
  const parser = new SseParser();
  return [...parser.push(text), ...parser.end()];
}

/** Options for {@link readSse}. */
export interface ReadSseOptions {
  /**
   * Stop reading (and cancel the stream) once this returns true. It is called after every event
   * with that event and all events so far. Needed for streams the server never closes, such as
   * `subscriptions/listen`.
   */
  until?: (event: SseEvent, events: readonly SseEvent[]) => boolean;
  /** Called for every event as it arrives, e.g. to trigger a change once an ack was seen. */
  onEvent?: (event: SseEvent, events: readonly SseEvent[]) => void | Promise<void>;
  /** Stop reading after this many milliseconds and return what arrived (`timedOut: true`). */
  timeoutMs?: number;
}

/** Result of {@link readSse}. */
export interface ReadSseResult {
  events: SseEvent[];
  /** The raw text that was read. */
  text: string;
  /** True when the stream was abandoned because `timeoutMs` elapsed. */
  timedOut: boolean;
  /** True when the server closed the stream (as opposed to `until` or a timeout stopping us). */
  ended: boolean;
}

/**
 * Reads an SSE response body incrementally. Resolves when the stream ends, `until` returns true
 * or `timeoutMs` elapses, and always releases the stream so sockets do not leak between tests.
 */
export async function readSse(
  body: ReadableStream<Uint8Array> | null,
  options: ReadSseOptions = {},
): Promise<ReadSseResult> {
  const events: SseEvent[] = [];
  let text = '';
  if (!body) return { events, text, timedOut: false, ended: true };
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  let timedOut = false;
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  const timeout =
    options.timeoutMs === undefined
      ? undefined
      : new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), options.timeoutMs);
        });

  const handle = async (batch: SseEvent[]): Promise<boolean> => {
    for (const event of batch) {
      events.push(event);
      await options.onEvent?.(event, events);
      if (options.until?.(event, events)) return true;
    }
    return false;
  };

  try {
    for (;;) {
      const next = reader.read();
      const step = timeout ? await Promise.race([next, timeout]) : await next;
      if (step === 'timeout') {
        timedOut = true;
        // The pending read rejects once the stream is cancelled below; nothing else awaits it.
        next.catch(() => undefined);
        break;
      }
      if (step.done) {
        text += decoder.decode();
        ended = true;
        await handle(parser.end());
        break;
      }
      const chunk = decoder.decode(step.value, { stream: true });
      text += chunk;
      if (await handle(parser.push(chunk))) break;
    }
  } finally {
    if (timer) clearTimeout(timer);
    if (!ended) await reader.cancel().catch(() => undefined);
    try {
      reader.releaseLock();
    } catch {
      // Some runtimes refuse to release a lock while a cancelled read is settling; harmless here.
    }
  }
  return { events, text, timedOut, ended };
}
