/** Methods that change nothing upstream: retried after any transport failure. */
export const SAFE_METHODS: ReadonlySet<string> = new Set([
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'ping',
  'completion/complete',
]);

/** Exponential backoff with full jitter; an abort ends the wait at once. */
export function backoff(
  attempt: number,
  retry: { baseDelayMs: number; maxDelayMs: number },
  signal?: AbortSignal,
): Promise<void> {
  const delay = Math.random() * Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** attempt);
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, delay);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
