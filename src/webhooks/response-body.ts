/** The event log keeps this much of a receiver's answer (bytes); the rest is read no further. */
export const MAX_RESPONSE_BODY_BYTES = 4096;

export interface ResponseBody {
  /** The first MAX_RESPONSE_BODY_BYTES as UTF-8 text (a character cut at the end is dropped; NUL is replaced). */
  readonly text: string;
  /** The answer was longer than what is kept. */
  readonly truncated: boolean;
}

/**
 * Reads at most `max` bytes of a response body and one more to know it was longer, then stops: leaving the loop
 * destroys the stream, so a large or endless answer costs one chunk, never its whole length. The request's abort
 * signal covers this read, so a receiver that trickles its body is cut at the delivery timeout.
 */
export async function readBounded(
  body: AsyncIterable<Uint8Array>,
  max: number = MAX_RESPONSE_BODY_BYTES,
): Promise<ResponseBody> {
  const kept = new Uint8Array(max);
  let length = 0;
  let truncated = false;
  for await (const chunk of body) {
    const room = max - length;
    kept.set(chunk.subarray(0, room), length);
    length += Math.min(room, chunk.length);
    if (chunk.length > room) {
      truncated = true;
      break;
    }
  }
  return { text: textOf(kept.subarray(0, length), truncated), truncated };
}

const DECODER = new TextDecoder();

/** PostgreSQL text holds no NUL; a multi-byte character the cut split in two is dropped, not shown as garbage. */
function textOf(bytes: Uint8Array, truncated: boolean): string {
  let end = bytes.length;
  if (truncated) {
    // Back up over the continuation bytes (10xxxxxx) of a character that did not fit, and its lead byte.
    let i = end - 1;
    while (i >= 0 && end - i <= 4 && ((bytes[i] ?? 0) & 0xc0) === 0x80) i--;
    const lead = bytes[i] ?? 0;
    const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    if (i >= 0 && end - i < need) end = i;
  }
  return DECODER.decode(bytes.subarray(0, end)).replaceAll("\u0000", "\uFFFD");
}
