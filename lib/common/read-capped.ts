/**
 * A fetch `Response`'s body as text, refused once it passes `max` bytes, whether its
 * `Content-Length` announces more or its stream runs on: an endpoint the library calls (a token or
 * introspection endpoint) must not be able to fill the process's memory with one answer.
 * `tooLong` words the error for the caller's own option or bound (`announced`: the size is the
 * `Content-Length`, else the bytes read so far).
 */
export async function readCapped(
  response: Response,
  max: number,
  tooLong: (bytes: number, announced: boolean) => string,
): Promise<string> {
  const announced = Number(response.headers.get('content-length'));
  if (Number.isFinite(announced) && announced > max) {
    await response.body?.cancel();
    throw new Error(tooLong(announced, true));
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw new Error(tooLong(size, false));
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
